/**
 * One object against a big CRD set, per process: `staticsite validate` (the built CLI) on one
 * HTTPRoute example with Gateway API's standard CRDs, the first time (--no-cache: every CRD file
 * parsed, the HTTPRoute CRD checked) and again with what an earlier run remembered (--cache-dir),
 * beside `node -e 0` and kubectl-validate (built by bench/validators/build.sh) on the same files.
 * With a baseline (bench/baseline.ts: the last release or BENCH_BASELINE), its built CLI runs the
 * same two ways in every round. Rounds alternate the tools; CPU is user + system from GNU time. Run: npm run bench:validate-startup -- [rounds]
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { thirdPartyModuleDir } from '../devenv/third-party-crds.ts';
import { builtCli } from '../devenv/webhook-process.ts';
import { baselineCli, baselineTree } from './baseline.ts';
import { type Measured, measure, median, spread } from './gnu-time.ts';

const rounds = Number(process.argv[2] ?? 10);
const dir = mkdtempSync(join(tmpdir(), 'bench-validate-startup-'));
const validators = spawnSync('bash', [join(import.meta.dirname, 'validators/build.sh')], { encoding: 'utf8' })
  .stdout.trim()
  .split('\n')
  .pop() as string;
const gatewayApi = await thirdPartyModuleDir('gateway-api');
const standard = join(gatewayApi, 'config', 'crd', 'standard');
const object = join(gatewayApi, 'examples', 'standard', 'simple-gateway', 'httproute.yaml');
// kubectl-validate reads every file of --local-crds as a CRD: the CRDs alone
const crdsOnly = join(dir, 'crds');
mkdirSync(crdsOnly);
for (const f of readdirSync(standard).filter((f) => f.endsWith('.yaml') && !f.includes('_vap_'))) {
  copyFileSync(join(standard, f), join(crdsOnly, f));
}
const cache = join(dir, 'cache');
const ours = (flags: string[]) => [process.execPath, builtCli(), 'validate', ...flags, '--crd', standard, object];
spawnSync(process.execPath, [builtCli(), 'validate', '--cache-dir', cache, '--crd', standard, object]);

// The last release's built CLI (bench/baseline.ts), the same runs, side by side.
const baseline = baselineTree();
const previous = baseline && baselineCli(baseline);
const previousCache = join(dir, 'baseline-cache');
if (previous)
  spawnSync(process.execPath, [previous, 'validate', '--cache-dir', previousCache, '--crd', standard, object]);
const theirs = (flags: string[]) => [process.execPath, previous ?? '', 'validate', ...flags, '--crd', standard, object];

const tools: Array<{ name: string; argv: string[] }> = [
  { name: 'node -e 0', argv: [process.execPath, '-e', '0'] },
  { name: 'staticsite validate, first run (--no-cache)', argv: ours(['--no-cache']) },
  { name: 'staticsite validate, CRDs remembered (--cache-dir)', argv: ours(['--cache-dir', cache]) },
  {
    name: 'kubectl-validate v0.0.4',
    argv: [join(validators, 'kubectl-validate'), '--local-crds', crdsOnly, '--version', '1.30', object],
  },
  ...(previous
    ? [
        { name: `${baseline?.label}: first run (--no-cache)`, argv: theirs(['--no-cache']) },
        { name: `${baseline?.label}: CRDs remembered (--cache-dir)`, argv: theirs(['--cache-dir', previousCache]) },
      ]
    : []),
];
const load = loadavg()[0] ?? 0;
const samples = new Map<string, Measured[]>();
for (let round = 0; round < rounds; round++) {
  for (const tool of round % 2 === 0 ? tools : [...tools].reverse()) {
    const m = measure(tool.argv, dir);
    if (m.status !== 0) throw new Error(`${tool.name} exited ${m.status}: ${m.stdout}`);
    samples.set(tool.name, [...(samples.get(tool.name) ?? []), m]);
  }
}
console.log(
  `${cpus().length} CPUs (${cpus()[0]?.model}), load ${load.toFixed(2)} at the start, ${loadavg()[0]?.toFixed(2)} at the end; ${rounds} rounds`,
);
// GNU time prints CPU to 10 ms: the mean of the rounds resolves the few ms a change moves.
console.log('| process | CPU s, median (spread) | CPU s, mean | wall s, median | peak RSS MB |');
console.log('|---|---|---|---|---|');
for (const [name, ms] of samples) {
  const cpu = ms.map((m) => m.cpu);
  console.log(
    `| ${name} | ${median(cpu).toFixed(2)} (${spread(cpu)}) | ${(cpu.reduce((a, b) => a + b, 0) / cpu.length).toFixed(3)} | ${median(ms.map((m) => m.wall)).toFixed(2)} | ${median(ms.map((m) => m.rssMb))} |`,
  );
}
rmSync(dir, { recursive: true, force: true });
