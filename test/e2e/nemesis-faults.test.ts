/**
 * The nemesis drills of the control plane and the network: two leader-elected controllers (the
 * built CLI), each reaching the API server through a real fault proxy (toxiproxy) and then its
 * recording proxy, while a seeded workload creates, edits and deletes sites throughout. Each fault
 * is injected and healed in turn: kube-apiserver and etcd killed with SIGKILL and restarted; etcd
 * compacted while the watches are down (410 Gone, relist); the leader partitioned from the API
 * server, its packets dropped, slowed, throttled and reset. After each, every site converges within
 * the bound; at the end the history checker finds no write outside a Lease, no site written by two
 * replicas at once, no record lost or orphaned, no stuck finalizer and no duplicate hostname.
 *
 * A control plane of its own: killing etcd must not touch the suites that share the test run's.
 */
import { expect } from 'chai';
import { ControlPlane } from '../../devenv/controlplane.ts';
import { NodeSimulator } from '../../devenv/node-simulator.ts';
import { Toxiproxy } from '../../devenv/toxiproxy.ts';
import { Drill } from '../support/nemesis/drill.ts';
import { FAULT_KINDS, type FaultKind, injectFault } from '../support/nemesis/faults.ts';

const SITES = 30;
/** After each fault is healed, every site is Ready at its generation within this. */
const CONVERGENCE_BOUND_MS = 60_000;
const REPLICAS = ['replica-a', 'replica-b'];

describe('e2e nemesis: the control plane and the network fail while users edit sites', function () {
  this.timeout(600_000);
  let cp: ControlPlane;
  let nodes: NodeSimulator;
  let toxiproxy: Toxiproxy;
  let drill: Drill;

  /** Heals, then waits for every site to converge and keeps the sample for the checker. */
  async function healed(label: string): Promise<void> {
    const stoppedAt = Date.now();
    await drill.converge(label, stoppedAt, CONVERGENCE_BOUND_MS * 2);
    const sample = drill.convergence.at(-1);
    expect(sample?.convergedAt, `${sample?.label}: every site Ready at its generation`).to.be.a('number');
  }

  /** Per replica process still running: its informers' relists after a 410 Gone. */
  async function expiredRelists(): Promise<Map<unknown, number>> {
    const counts = new Map<unknown, number>();
    for (const replica of drill.replicas.values()) {
      if (!replica.running) continue;
      const n = await replica.process.metric('staticsite_informer_relists_total', { reason: 'expired' }).catch(() => 0);
      counts.set(replica.process, n);
    }
    return counts;
  }

  before(async function () {
    this.timeout(300_000);
    cp = await new ControlPlane({ keepDir: Boolean(process.env.KEEP_CONTROLLER_LOGS) }).start();
    nodes = new NodeSimulator(cp.admin);
    await nodes.start();
    toxiproxy = await Toxiproxy.start();
    drill = new Drill({ controlPlane: cp, namespace: 'nem-faults', seed: 4803 });
    await drill.setUp();
    for (const identity of REPLICAS) {
      await drill.startReplica(identity, {
        via: async (port) => (await toxiproxy.createProxy(identity, `127.0.0.1:${port}`)).listen,
      });
    }
    drill.supervise();
    await drill.workload.seedSites(SITES);
    await healed('start');
    drill.workload.start();
  });

  after(async function () {
    this.timeout(180_000);
    await drill?.tearDown();
    await toxiproxy?.stop();
    await nodes?.stop();
    await cp?.stop();
  });

  const titles: Record<FaultKind, string> = {
    'apiserver-kill': 'kube-apiserver killed with SIGKILL and restarted',
    'etcd-kill': 'etcd killed with SIGKILL and restarted',
    'etcd-compaction':
      'etcd compacted while the watches are down and kube-apiserver restarted: the informers get 410 Gone and relist',
    'leader-pause': 'the leader stopped with SIGSTOP until the other takes over, then resumed',
    partition: 'the leader partitioned from the API server past its lease: the other takes over',
    'black-hole': 'the leader’s packets dropped (a black hole): its renewals hang, leading ends at the renew deadline',
    latency: 'latency of 300 ms each way on the leader’s connection',
    bandwidth: 'the leader’s bandwidth cut to 16 KB/s',
    'reset-peer': 'the leader’s connections reset by the peer',
  };

  for (const kind of FAULT_KINDS) {
    it(titles[kind], async () => {
      const before = await expiredRelists();
      await injectFault(kind, { cp, drill, toxiproxy });
      await healed(kind);
      if (kind === 'etcd-compaction') {
        // The API server answers such a watch 200 with one ERROR event, code 410 (reason Expired).
        const after = await expiredRelists();
        const relisted = [...after].filter(([process, n]) => n > (before.get(process) ?? 0));
        expect(relisted, 'informers that relisted after a 410 Gone').to.not.deep.equal([]);
      }
    });
  }

  it('the history: no write outside a Lease, no site written by two replicas at once, records consistent, nothing stuck', async () => {
    await drill.workload.stop();
    await healed('end');
    const { violations } = await drill.violations(CONVERGENCE_BOUND_MS, { lateEvents: true });
    expect(violations, Drill.report(violations)).to.deep.equal([]);
    expect(drill.unexplainedOperations(), 'users’ writes failed only during the outages').to.deep.equal([]);
    // The faults did what they are for: leadership moved, and the replicas that lost it restarted.
    expect(drill.restarts.length, 'replicas restarted after losing the lead').to.be.greaterThan(0);
    const operations = drill.workload.operations.filter((op) => op.status >= 200 && op.status < 300).length;
    expect(operations, 'the users kept editing').to.be.greaterThan(100);
  });
});
