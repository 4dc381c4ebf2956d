/**
 * The nemesis soak: the faults of test/e2e/nemesis-faults.test.ts, at random (seeded), for a long
 * run, while users create, edit and delete sites; the recorded history checked at the end.
 *
 *   node bench/nemesis-soak.ts [minutes=30] [seed=1] [sites=30]
 *
 * Two leader-elected controllers (the built CLI: `npm run build` first), each through toxiproxy and
 * its own recording proxy, on a control plane of its own. Prints a Markdown report for
 * bench/RESULTS.md: faults injected per kind, time to converge after each (median, max), requests
 * and writes checked, the replicas' restarts, the users' operations, and every violation (0 wanted).
 */
import { readFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { ControlPlane } from '../devenv/controlplane.ts';
import { random as seededRandom } from '../devenv/fuzz/mutations.ts';
import { NodeSimulator } from '../devenv/node-simulator.ts';
import { Toxiproxy } from '../devenv/toxiproxy.ts';
import { isMutating } from '../test/support/history/index.ts';
import { Drill } from '../test/support/nemesis/drill.ts';
import { FAULT_KINDS, type FaultKind, injectFault } from '../test/support/nemesis/faults.ts';

const [minutes = 30, seed = 1, sites = 30] = process.argv.slice(2).map(Number);
const CONVERGENCE_BOUND_MS = 60_000;
const REPLICAS = ['replica-a', 'replica-b'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);

function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
}

async function loadAverage(): Promise<string> {
  return (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadAtStart = await loadAverage();
  const cp = await new ControlPlane().start();
  const nodes = new NodeSimulator(cp.admin);
  await nodes.start();
  const toxiproxy = await Toxiproxy.start();
  const drill = new Drill({ controlPlane: cp, namespace: 'soak', seed });
  const pick = seededRandom(seed ^ 0x5eed);
  const injected: Array<{ kind: FaultKind; convergeMs: number | undefined }> = [];
  try {
    await drill.setUp();
    for (const identity of REPLICAS) {
      await drill.startReplica(identity, {
        via: async (port) => (await toxiproxy.createProxy(identity, `127.0.0.1:${port}`)).listen,
      });
    }
    drill.supervise();
    await drill.workload.seedSites(sites);
    await drill.converge('start', Date.now(), CONVERGENCE_BOUND_MS * 2);
    drill.workload.start();
    const deadline = started + minutes * 60_000;
    while (Date.now() < deadline) {
      const kind = FAULT_KINDS[Math.floor(pick() * FAULT_KINDS.length)] as FaultKind;
      log(`fault ${injected.length + 1}: ${kind}`);
      await injectFault(kind, { cp, drill, toxiproxy });
      const healedAt = Date.now();
      await drill.converge(kind, healedAt, CONVERGENCE_BOUND_MS * 2);
      const sample = drill.convergence.at(-1);
      const convergeMs = sample?.convergedAt === undefined ? undefined : sample.convergedAt - healedAt;
      injected.push({ kind, convergeMs });
      log(`  converged ${convergeMs === undefined ? 'NEVER' : `in ${convergeMs} ms`}`);
      await sleep(5_000 + Math.floor(pick() * 15_000));
    }
    await drill.workload.stop();
    await drill.converge('end', Date.now(), CONVERGENCE_BOUND_MS * 2);
    const { history, violations } = await drill.violations(CONVERGENCE_BOUND_MS);
    const requests = history.replicas.flatMap((r) => r.requests);
    const writes = requests.filter(isMutating);
    const operations = drill.workload.operations;
    const unexplained = drill.unexplainedOperations();

    const lines = [
      `**Command:** \`node bench/nemesis-soak.ts ${minutes} ${seed} ${sites}\``,
      '',
      `**Machine, ${new Date(started).toISOString().slice(0, 16).replace('T', ' ')} UTC:** ${cpus().length} vCPU ${cpus()[0]?.model.trim()}, Node ${process.version}; load average ${loadAtStart} at the start, ${await loadAverage()} at the end.`,
      '',
      `Seed ${seed}; ${((Date.now() - started) / 60_000).toFixed(1)} min; ${sites} sites to start with; lease ${'6 s'}, renew deadline 3 s, retry 1 s; convergence bound ${CONVERGENCE_BOUND_MS / 1000} s after each fault is healed.`,
      '',
      '| fault | injected | converged after (median) | (max) |',
      '|---|---|---|---|',
      ...FAULT_KINDS.map((kind) => {
        const of = injected.filter((f) => f.kind === kind);
        const times = of.flatMap((f) => (f.convergeMs === undefined ? [] : [f.convergeMs])).sort((a, b) => a - b);
        const never = of.length - times.length;
        const max = times.length ? `${(times[times.length - 1] as number) / 1000} s` : '-';
        return `| ${kind} | ${of.length} | ${times.length ? `${quantile(times, 0.5) / 1000} s` : '-'} | ${max}${never ? ` (${never} never)` : ''} |`;
      }),
      `| **all** | **${injected.length}** | | |`,
      '',
      `- Requests recorded from the replicas: ${requests.length}; mutating requests checked against the leader's Lease windows: ${writes.length}.`,
      `- Replica restarts after losing the lead (as a kubelet restarts a pod): ${drill.restarts.length}.`,
      `- Users' operations: ${operations.length}, ${operations.filter((o) => o.status >= 200 && o.status < 300).length} accepted; failed within an outage: ${operations.length - operations.filter((o) => o.status >= 200 && o.status < 300).length - unexplained.length}; failed outside any: ${unexplained.length}.`,
      `- Final state: ${history.final?.sites.length} sites, ${history.final?.records.length} records, ${history.final?.deletedSites.length} sites deleted by the users.`,
      `- **Violations: ${violations.length}.**`,
      ...violations.slice(0, 20).map((v) => `  - ${v.rule}${v.replica ? ` [${v.replica}]` : ''}: ${v.detail}`),
      ...unexplained
        .slice(0, 10)
        .map((op) => `  - unexplained ${op.kind} ${op.name}: ${op.status} ${op.message ?? ''}`),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    process.exitCode = violations.length === 0 && unexplained.length === 0 ? 0 : 1;
  } finally {
    await drill.tearDown().catch((error) => log(`tear down: ${(error as Error).message}`));
    await toxiproxy.stop();
    await nodes.stop();
    await cp.stop();
  }
}

await main();
