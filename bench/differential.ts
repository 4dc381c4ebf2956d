/**
 * The long differential run: generated CRDs and objects (test/fixtures/differential) through the Go
 * oracle (kube-apiserver's apiextensions code at the control plane's version) and through the
 * engine. Reports cases per second, how many CRDs the server's code refused, and mismatches by
 * class with the first example of each; with a file name, every mismatch as one JSON line there.
 * Run: npm run bench:differential -- [cases] [seed] [mismatches.jsonl]
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import fc from 'fast-check';
import { stringifyJson } from '../crd/json-int64.ts';
import { CrdOracle } from '../devenv/crd-oracle.ts';
import { caseArb, knownGap, type Mismatch, runCase } from '../test/fixtures/differential/differential.ts';

const cases = Number(process.argv[2] ?? 100_000);
const seed = Number(process.argv[3] ?? 20261203);
const mismatchFile = process.argv[4];
if (mismatchFile) writeFileSync(mismatchFile, '');
const oracle = await CrdOracle.start();
const byClass = new Map<string, { count: number; first: string }>();
let run = 0;
let refused = 0;
let tied = 0;
const started = performance.now();
const load = loadavg()[0];
await fc.assert(
  fc.asyncProperty(caseArb, async (c) => {
    const outcome = await runCase(oracle, c);
    run++;
    if (outcome.crdRefused) refused++;
    if (outcome.contributorTie) tied++;
    if (run % 5000 === 0) process.stderr.write(`${run} cases, ${byClass.size} mismatch classes\n`);
    const m: Mismatch | undefined = outcome.mismatch;
    if (m) {
      const gap = knownGap(m);
      const key = gap ? `known gap: ${gap}` : `unexplained ${m.class}: ${(m.differences[0] ?? '').slice(0, 60)}`;
      if (mismatchFile) {
        appendFileSync(mismatchFile, `${stringifyJson({ key, differences: m.differences, case: outcome.request })}\n`);
      }
      const entry = byClass.get(key) ?? {
        count: 0,
        first: stringifyJson({ differences: m.differences, case: outcome.request }),
      };
      entry.count++;
      byClass.set(key, entry);
    }
    return true;
  }),
  { seed, numRuns: cases },
);
const seconds = (performance.now() - started) / 1000;
await oracle.close();
console.log(
  `seed ${seed}: ${run} cases in ${seconds.toFixed(1)} s (${(run / seconds).toFixed(0)}/s), ${refused} CRDs refused by the server's code`,
);
console.log(`equal-cost contributor lists the server could give in another map order (not mismatches): ${tied}`);
console.log(
  `machine: ${cpus().length} CPUs (${cpus()[0]?.model}), load ${load?.toFixed(2)} at start, ${loadavg()[0]?.toFixed(2)} at end`,
);
const unexplained = [...byClass].filter(([k]) => k.startsWith('unexplained')).reduce((n, [, e]) => n + e.count, 0);
console.log(
  `mismatches: ${[...byClass.values()].reduce((n, e) => n + e.count, 0)} (${unexplained} outside the known gaps)`,
);
for (const [k, e] of [...byClass].sort((a, b) => b[1].count - a[1].count)) {
  console.log(`\n${e.count} × ${k}\n  ${e.first.slice(0, 6000)}`);
}
