/**
 * The controller gives a burst's memory back once its reconciles go quiet (controller/memory-reclaim.ts),
 * through the built CLI against a real control plane: a burst of sites is reconciled, and within two
 * periods of quiet the process logs the collection and holds less anonymous memory than it did at the
 * end of the burst, still ready, every site reconciled.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildCrd } from '../../api/index.ts';
import { MEMORY_RECLAIM } from '../../controller/memory-reclaim.ts';
import { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd } from '../../devenv/crds.ts';
import { observedStatus } from '../../devenv/observed.ts';
import { freePort } from '../../devenv/ports.ts';
import { builtCli } from '../../devenv/webhook-process.ts';

const NS = 'reclaim-e2e';
const SITES = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
/** Sites created at once: each takes about three reconciles, together past the burst (MEMORY_RECLAIM). */
const BURST_SITES = 200;
const RECLAIMED = 'memory given back after a burst';

interface LogLine {
  msg?: string;
  time?: string;
  /** The collection's duration, on the reclaim's line. */
  ms?: number;
  reconciles?: number;
}

/** Anonymous resident memory (heaps, malloc) in KiB, as the kernel counts it. */
function anonKib(child: ChildProcess): number {
  return Number(/^RssAnon:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]);
}

describe('e2e: the controller gives a burst’s memory back once quiet (built CLI, own control plane)', function () {
  this.timeout(240_000);
  const cp = new ControlPlane();
  let child: ChildProcess;
  let metricsPort: number;
  let recordsDir: string;
  const logs: LogLine[] = [];

  before(async function () {
    this.timeout(180_000);
    await cp.start();
    await installCrd(cp.admin, buildCrd());
    await cp.ensureNamespace(NS);
    metricsPort = await freePort();
    recordsDir = await mkdtemp(join(tmpdir(), 'reclaim-records-'));
    child = spawn(
      process.execPath,
      [
        builtCli(),
        'controller',
        `--kubeconfig=${cp.kubeconfigPath}`,
        `--namespace=${NS}`,
        `--claims-namespace=${NS}`,
        `--metrics-port=${metricsPort}`,
        '--metrics-bind-address=127.0.0.1',
        '--metrics-secure=false',
        `--records=dir:${recordsDir}`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let pending = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('{')) logs.push(JSON.parse(line));
    });
    await eventually(
      'the controller ready',
      async () => (await observedStatus(`http://127.0.0.1:${metricsPort}/readyz`)) === 200,
      30_000,
    );
  });

  after(async () => {
    child?.kill('SIGTERM');
    await cp.stop();
    await rm(recordsDir, { recursive: true, force: true });
  });

  it(`after ${BURST_SITES} sites at once: one memory-reducing collection once quiet, less memory, still serving`, async () => {
    const site = (i: number) => ({
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name: `burst-${i}`, namespace: NS },
      spec: { content: `<h1>${i}</h1>`, replicas: 1 },
    });
    expect(
      logs.filter((l) => l.msg === RECLAIMED),
      'no collection before the burst',
    ).to.have.length(0);
    for (let i = 0; i < BURST_SITES; i += 25) {
      const created = await Promise.all(
        Array.from({ length: 25 }, (_, j) => cp.admin.post(SITES, site(i + j)).then((r) => r.status)),
      );
      expect(created.every((status) => status === 201)).to.equal(true);
    }
    // The reclaim may follow the burst's last reconcile within a second (a period boundary right
    // after it), so the memory is sampled all along and compared across the collection's own time.
    const samples: Array<{ at: number; anon: number }> = [];
    const sampler = setInterval(() => samples.push({ at: Date.now(), anon: anonKib(child) }), 200);
    let line: LogLine;
    try {
      line = await eventually('the reclaim logged', async () => logs.find((l) => l.msg === RECLAIMED), 120_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      clearInterval(sampler);
    }
    expect(line.reconciles, 'reconciles before the collection').to.be.at.least(MEMORY_RECLAIM.burst);
    const collectedAt = Date.parse(line.time ?? '') - (line.ms ?? 0);
    const before = samples.filter((x) => x.at < collectedAt - 50).at(-1);
    const after = samples.at(-1);
    expect(before, 'a sample before the collection').to.not.equal(undefined);
    expect(after?.anon, `anonymous KiB: ${before?.anon} before the collection, ${after?.anon} after`).to.be.below(
      before?.anon ?? 0,
    );
    expect(logs.filter((l) => l.msg === RECLAIMED)).to.have.length(1);
    expect(await observedStatus(`http://127.0.0.1:${metricsPort}/readyz`)).to.equal(200);
    type Listed = { items: Array<{ status?: { conditions?: Array<{ type: string }> } }> };
    await eventually('every site reconciled', async () => {
      const listed = await cp.admin.get<Listed>(SITES);
      const reported = listed.body.items.filter((s) => s.status?.conditions?.some((c) => c.type === 'Ready'));
      return reported.length === BURST_SITES;
    });
  });
});
