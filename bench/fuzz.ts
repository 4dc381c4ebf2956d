/**
 * The long coverage-guided fuzz runs: `npm run bench:fuzz -- [SECONDS] [SEED] [webhook|validate]`
 * (default 600 s, seed 1, the webhook). `webhook` fuzzes the shipped webhook's /mutate, /validate
 * and /convert (devenv/fuzz/webhook-fuzzer.ts), `validate` the shipped `staticsite validate`
 * (devenv/fuzz/validate-fuzzer.ts). Prints the report as JSON; findings land in
 * bench/fuzz-findings/ (copy each into test/fixtures/fuzz-findings/ once fixed: it becomes a
 * regression case).
 */
import { fuzzValidate } from '../devenv/fuzz/validate-fuzzer.ts';
import { fuzzWebhook } from '../devenv/fuzz/webhook-fuzzer.ts';

const seconds = Number(process.argv[2] ?? 600);
const seed = Number(process.argv[3] ?? 1);
const target = process.argv[4] ?? 'webhook';
const options = {
  seed,
  seconds,
  findingsDir: new URL('./fuzz-findings/', import.meta.url).pathname,
  progress: (line: string) => process.stderr.write(`${line}\n`),
};
let report: Awaited<ReturnType<typeof fuzzWebhook>>;
if (target === 'webhook') {
  report = await fuzzWebhook(options);
} else if (target === 'validate') {
  report = await fuzzValidate(options);
} else {
  process.stderr.write(`unknown target ${JSON.stringify(target)}: webhook or validate\n`);
  process.exit(2);
}
process.stdout.write(
  `${JSON.stringify({ target, ...report, findings: report.findings.map(({ kind, path, detail }) => ({ kind, path, detail })) }, null, 2)}\n`,
);
