/**
 * The long coverage-guided fuzz run of the shipped webhook (devenv/fuzz/webhook-fuzzer.ts):
 * `npm run bench:fuzz -- [SECONDS] [SEED]` (default 600 s, seed 1). Prints the report as JSON;
 * findings land in bench/fuzz-findings/ (copy each into test/fixtures/fuzz-findings/ once fixed: it
 * becomes a regression case).
 */
import { fuzzWebhook, jsonFilesUnder } from '../devenv/fuzz/webhook-fuzzer.ts';

const seconds = Number(process.argv[2] ?? 600);
const seed = Number(process.argv[3] ?? 1);
const fixtures = new URL('../test/fixtures/', import.meta.url).pathname;
const report = await fuzzWebhook({
  seed,
  seconds,
  seedFiles: jsonFilesUnder(`${fixtures}admission`, `${fixtures}conversion`),
  findingsDir: new URL('./fuzz-findings/', import.meta.url).pathname,
  progress: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(
  `${JSON.stringify({ ...report, findings: report.findings.map(({ kind, path, detail }) => ({ kind, path, detail })) }, null, 2)}\n`,
);
