/**
 * The pause drills (docs/controller.md, "Fencing"): a replica stopped with SIGSTOP past its lease
 * while users edit sites, then resumed. Before fencing, a resumed leader went on reconciling from
 * its stale caches for 1.5 s (26 accepted writes, a ConfigMap and a Deployment PUT among them). Now
 * its first write is refused before it leaves, leading ends and the process exits; the history
 * checker finds no write outside any replica's Lease.
 */
import { expect } from 'chai';
import { SHARD_LABEL, SHARD_LEASE_PREFIX } from '../../api/index.ts';
import { LEASE_NAME } from '../../controller/manager.ts';
import { eventually } from '../../devenv/crds.ts';
import { isMutating, leadershipWindows } from '../support/history/index.ts';
import { Drill } from '../support/nemesis/drill.ts';
import type { Replica } from '../support/nemesis/replicas.ts';
import { DRILL_LEASE } from '../support/nemesis/replicas.ts';
import { testCluster } from '../support/shared.ts';

const SITES = 40;
/** Paused this long: past the lease duration, so another replica takes over meanwhile. */
const PAUSE_MS = (DRILL_LEASE.durationS + 4) * 1000;
const CONVERGENCE_BOUND_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a replica sent from `since` on, its own election Lease requests apart. */
function writesSince(drill: Drill, replica: Replica, since: number, lease: string) {
  return replica.proxy.requests.filter(
    (r) =>
      isMutating({ ...r, dryRun: r.query.has('dryRun') }) &&
      r.at >= since &&
      !(r.leaseName === lease && r.path.includes(`/namespaces/${drill.system}/leases`)),
  );
}

async function exitCode(replica: Replica, timeoutMs: number): Promise<number | null | 'running'> {
  return Promise.race([replica.exited(), sleep(timeoutMs).then(() => 'running' as const)]);
}

describe('e2e nemesis: a replica paused past its lease writes nothing when it resumes (fencing)', function () {
  this.timeout(300_000);

  describe('the single leader', () => {
    let drill: Drill;

    before(async function () {
      this.timeout(180_000);
      drill = new Drill({ controlPlane: (await testCluster()).controlPlane, namespace: 'nem-pause', seed: 4801 });
      await drill.setUp();
      await drill.startReplica('replica-a');
      await eventually('replica-a leads', async () => (await drill.holder()) === 'replica-a', 30_000);
      await drill.startReplica('replica-b');
      await drill.workload.seedSites(SITES);
      await drill.converge('start', Date.now());
    });

    after(async function () {
      this.timeout(120_000);
      await drill?.tearDown();
    });

    it('SIGSTOP of the leader past its lease during a burst of edits: after SIGCONT it sends 0 writes and exits', async () => {
      const leader = drill.replicas.get('replica-a') as Replica;
      drill.workload.start();
      await sleep(2_000);
      const pausedAt = Date.now();
      leader.pause();
      await eventually('replica-b takes the lease', async () => (await drill.holder()) === 'replica-b', 30_000);
      await sleep(Math.max(0, pausedAt + PAUSE_MS - Date.now()));
      leader.resume();
      // Leadership lost: the process exits 1 (a pod restarts it).
      expect(await exitCode(leader, 15_000)).to.equal(1);
      await sleep(2_000);
      await drill.workload.stop();
      await drill.converge('leader paused and resumed', Date.now());
      await leader.restart();
      await leader.waitReady();

      const { history, violations } = await drill.violations(CONVERGENCE_BOUND_MS);
      expect(violations, Drill.report(violations)).to.deep.equal([]);
      const takeover = leadershipWindows(history, LEASE_NAME, drill.system).find(
        (w) => w.replica === 'replica-b' && w.from >= pausedAt,
      );
      expect(takeover, 'replica-b took the lease while replica-a was stopped').to.not.equal(undefined);
      // The drill is not vacuous: the leader wrote before its pause, the new one after the takeover.
      expect(writesSince(drill, leader, 0, LEASE_NAME).filter((r) => r.at < pausedAt)).to.not.deep.equal([]);
      const standby = drill.replicas.get('replica-b') as Replica;
      expect(writesSince(drill, standby, takeover?.from ?? 0, LEASE_NAME)).to.not.deep.equal([]);
      // The scenario's own number: 0 writes from the paused leader once the new leader held the lease,
      // until its restart (which campaigns as a standby and writes nothing while replica-b leads).
      const stale = writesSince(drill, leader, takeover?.from ?? 0, LEASE_NAME).map((r) => `${r.method} ${r.path}`);
      expect(stale).to.deep.equal([]);
      expect(drill.workload.unexplained(), 'every user edit was accepted').to.deep.equal([]);
    });
  });

  describe('a shard', () => {
    let drill: Drill;

    before(async function () {
      this.timeout(180_000);
      drill = new Drill({
        controlPlane: (await testCluster()).controlPlane,
        namespace: 'nem-shard-pause',
        sharded: true,
        seed: 4802,
      });
      await drill.setUp();
      for (const shard of ['shard-a', 'shard-b', 'shard-c']) await drill.startReplica(shard);
      await eventually('shard-a leads the election', async () => (await drill.holder()) === 'shard-a', 30_000);
      await drill.workload.seedSites(SITES);
      await drill.converge('start', Date.now());
    });

    after(async function () {
      this.timeout(120_000);
      await drill?.tearDown();
    });

    /** The sites a shard label holds. */
    async function namesOf(shard: string): Promise<string[]> {
      const list = await drill.cp.admin.must<{
        items: Array<{ metadata: { name: string; labels?: Record<string, string> } }>;
      }>('GET', `/apis/staticsite.dev/v1/namespaces/${drill.namespace}/staticsites`);
      return list.items.filter((s) => s.metadata.labels?.[SHARD_LABEL] === shard).map((s) => s.metadata.name);
    }
    const sitesOf = async (shard: string) => (await namesOf(shard)).length;

    it('SIGSTOP of a shard past its Lease: its sites move; after SIGCONT it touches none of them and exits', async () => {
      // A shard that does not lead the election: its pause is a shard's fault alone.
      const paused = drill.replicas.get('shard-c') as Replica;
      expect(await sitesOf('shard-c')).to.be.greaterThan(0);
      drill.workload.start();
      await sleep(2_000);
      // Its own sites edited at once, so reconciles are queued on shard-c when it stops (4 workers
      // for all of them). 300 ms lets the requests already sent reach the recording proxy first: on a
      // loaded machine they were received after the lease expired, which the checker cannot tell
      // from a write sent then.
      const own = await namesOf('shard-c');
      await Promise.all(own.map((name) => drill.workload.edit(name)));
      await sleep(300);
      const pausedAt = Date.now();
      paused.pause();
      await eventually('the sharder moves shard-c’s sites away', async () => (await sitesOf('shard-c')) === 0, 60_000);
      const movedAt = Date.now();
      await sleep(Math.max(2_000, pausedAt + PAUSE_MS - Date.now()));
      paused.resume();
      expect(await exitCode(paused, 15_000)).to.equal(1);
      await sleep(2_000);
      await drill.workload.stop();
      await drill.converge('shard paused and resumed', Date.now());

      const { violations } = await drill.violations(CONVERGENCE_BOUND_MS);
      expect(violations, Drill.report(violations)).to.deep.equal([]);
      const lease = `${SHARD_LEASE_PREFIX}shard-c`;
      expect(writesSince(drill, paused, 0, lease).filter((r) => r.at < pausedAt)).to.not.deep.equal([]);
      // Its sites belonged to others from `movedAt` at the latest: not one write of shard-c since.
      const stale = writesSince(drill, paused, movedAt, lease).map((r) => `${r.method} ${r.path}`);
      expect(stale).to.deep.equal([]);
      expect(drill.workload.unexplained(), 'every user edit was accepted').to.deep.equal([]);
    });
  });
});
