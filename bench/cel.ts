/**
 * Benchmark of the Kubernetes CEL environment on StaticSite's own rules (api/schema.ts):
 * compile time of the CRD's v1 schema, and evaluation time per object with the rules pre-compiled
 * (create: no old object; update: with the old object, so the transition rule runs too).
 *   node bench/cel.ts [evaluations=200000] [compiles=200]
 * Prints a Markdown table; bench/RESULTS.md records a run.
 */
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { buildCrd } from '../api/index.ts';
import { compileRules, createCelEnvironment, evaluate } from '../crd/cel/index.ts';

const numbers = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const EVALS = Number(numbers[0] ?? 200_000);
const COMPILES = Number(numbers[1] ?? 200);
const SAMPLES = 21;

const crd = buildCrd();
const schemas = crd.spec.versions.map((v) => v.schema.openAPIV3Schema);
const [schema] = schemas.slice(-1) as [(typeof schemas)[number]];
const site = {
  apiVersion: 'staticsite.dev/v1',
  kind: 'StaticSite',
  metadata: { name: 'shop', namespace: 'default', uid: '5e1f2c1a-8f7e-4a51-9b0e-4f5f6f0c8d11', generation: 1 },
  spec: { content: '<h1>shop</h1>', replicas: 3, tier: 'prod', hostname: 'shop.default.example.com' },
};
const updated = { ...site, spec: { ...site.spec, replicas: 4 } };

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** Compiles every served version's schema of the StaticSite CRD (what loading the CRD costs). */
function timeCompile(environment?: ReturnType<typeof createCelEnvironment>): number {
  const t0 = process.hrtime.bigint();
  for (const s of schemas) {
    const { errors } = compileRules(s, { environment });
    if (errors.length > 0) throw new Error(`StaticSite rules do not compile: ${JSON.stringify(errors)}`);
  }
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const coldCpu0 = process.cpuUsage();
const coldCompileMs = timeCompile();
const coldCpu = process.cpuUsage(coldCpu0);
if (process.argv.includes('--cold-only')) {
  console.log(`${coldCompileMs.toFixed(3)} ${((coldCpu.user + coldCpu.system) / 1000).toFixed(3)}`);
  process.exit(0);
}
const environment = createCelEnvironment();

/** The first compile in fresh processes (modules loaded, nothing compiled yet): median of 7 processes. */
function coldCompiles(): { wall: number[]; cpu: number[] } {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < 7; i++) {
    const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--cold-only'], { encoding: 'utf8' });
    const [w, c] = child.stdout.trim().split(' ').map(Number);
    wall.push(w as number);
    cpu.push(c as number);
  }
  return { wall, cpu };
}
const cold = coldCompiles();

const { compiled } = compileRules(schema);
const check = evaluate(compiled, site);
if (check.errors.length > 0) throw new Error(`the sample site is invalid: ${JSON.stringify(check.errors)}`);
const bad = evaluate(compiled, { ...site, spec: { ...site.spec, replicas: 1 } });
if (bad.errors.length !== 1) throw new Error('the prod rule did not fire');

/** Wall-clock and CPU (user + system) nanoseconds per evaluation; CPU time is what load on a shared machine does not inflate. */
function timeEvaluations(object: unknown, old: unknown, n: number): { wall: number; cpu: number } {
  let sink = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) sink += evaluate(compiled, object, old).errors.length;
  const wall = Number(process.hrtime.bigint() - t0) / n;
  const cpu = process.cpuUsage(cpu0);
  if (sink !== 0) throw new Error('unexpected errors');
  return { wall, cpu: ((cpu.user + cpu.system) * 1000) / n };
}

// warm-up
for (let i = 0; i < 20; i++) timeCompile(environment);
timeEvaluations(site, undefined, 20_000);
timeEvaluations(updated, site, 20_000);

const compileMs: number[] = [];
for (let i = 0; i < COMPILES; i++) compileMs.push(timeCompile(environment));
const create: Array<{ wall: number; cpu: number }> = [];
const update: Array<{ wall: number; cpu: number }> = [];
for (let s = 0; s < SAMPLES; s++) {
  create.push(timeEvaluations(site, undefined, Math.ceil(EVALS / SAMPLES)));
  update.push(timeEvaluations(updated, site, Math.ceil(EVALS / SAMPLES)));
}
const row = (label: string, xs: number[]) =>
  console.log(`| ${label} | ${fmt(median(xs))} | ${fmt(Math.min(...xs))} | ${fmt(Math.max(...xs))} |`);

const fmt = (ns: number) => (ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(0)} ns`);
console.log(`node ${process.version}, ${new Date().toISOString()}`);
console.log('| measurement | median | min | max |');
console.log('|---|---|---|---|');
const ms = (xs: number[]) =>
  `${median(xs).toFixed(2)} ms | ${Math.min(...xs).toFixed(2)} ms | ${Math.max(...xs).toFixed(2)} ms`;
console.log(
  `| compile the StaticSite CRD, first compile in a fresh process (environment included; 7 processes), wall clock | ${ms(cold.wall)} |`,
);
console.log(`| compile the StaticSite CRD, first compile in a fresh process, CPU time | ${ms(cold.cpu)} |`);
console.log(
  `| compile the StaticSite CRD (v1alpha1 + v1, 5 rules), warm, shared library environment | ${ms(compileMs)} |`,
);
for (const [label, samples] of [
  ['create (2 rules run)', create],
  ['update (3 rules run)', update],
] as const) {
  row(
    `evaluate per object, ${label}, wall clock`,
    samples.map((x) => x.wall),
  );
  row(
    `evaluate per object, ${label.split(' ')[0]}, CPU time`,
    samples.map((x) => x.cpu),
  );
}
console.log(
  `load average: ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}, ${cpus().length} CPUs`,
);
