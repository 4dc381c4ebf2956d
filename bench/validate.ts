/**
 * Offline validators on one corpus, side by side: `staticsite validate` (the built CLI), kubeconform
 * (JSON Schema from the CRDs, as its openapi2jsonschema.py makes them; no CEL) and kubectl-validate
 * (the apiextensions validators, CEL included), the last two built from the Go module proxy by
 * bench/validators/build.sh. The corpus: 1,000 StaticSites and 200 Widgets (a second CRD with a CEL
 * rule), one object per file, some invalid in five ways. Reported per tool: wall and CPU time, per
 * object, peak RSS, and each file's verdict, with the reason for every disagreement. Also: one
 * file through our CLI beside `node -e 0` (start-up) and a 40 MB file (memory against input).
 * Rounds alternate the tools. Run: npm run bench:validate -- [rounds]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { buildCrd } from '../api/index.ts';
import type { JSONSchemaProps } from '../crd/apiextensions.ts';
import { builtCli } from '../devenv/webhook-process.ts';
import { widgetCrd } from '../test/fixtures/widget-crd.ts';
import { measure as measureIn, median, spread } from './gnu-time.ts';

const rounds = Number(process.argv[2] ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'bench-validate-'));
const bin = spawnSync('bash', [join(import.meta.dirname, 'validators/build.sh')], { encoding: 'utf8' })
  .stdout.trim()
  .split('\n')
  .pop() as string;

// ---- the corpus ------------------------------------------------------------------------------

/** What each object is, so disagreements can be explained by the kind of fault. */
type Fault = 'none' | 'cel' | 'type' | 'unknown-field' | 'required' | 'cel-pattern';
const expectedFault = new Map<string, Fault>();

function site(i: number): [Record<string, unknown>, Fault] {
  const spec: Record<string, unknown> = { content: `<p>site ${i}</p>`, replicas: 2, tier: 'dev' };
  let fault: Fault = 'none';
  if (i % 10 === 1) [spec.tier, spec.replicas, fault] = ['prod', 1, 'cel'];
  else if (i % 10 === 3) [spec.replicas, fault] = ['two', 'type'];
  else if (i % 10 === 5) [spec.colour, fault] = ['red', 'unknown-field'];
  else if (i % 10 === 7) [spec.content, fault] = [undefined, 'required'];
  else if (i % 20 === 9) [spec.hostname, fault] = ['Not_A_Host', 'cel-pattern'];
  if (spec.content === undefined) delete spec.content;
  const object = {
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: { name: `site-${i}`, namespace: 'web' },
    spec,
  };
  return [object, fault];
}

function widget(i: number): [Record<string, unknown>, Fault] {
  const spec: Record<string, unknown> = { size: 3 };
  let fault: Fault = 'none';
  if (i % 5 === 1) [spec.size, fault] = [11, 'cel'];
  else if (i % 5 === 3) [spec.size, fault] = ['big', 'type'];
  return [
    { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: `widget-${i}`, namespace: 'web' }, spec },
    fault,
  ];
}

const objects = join(dir, 'objects');
const crds = join(dir, 'crds');
const schemas = join(dir, 'schemas');
mkdirSync(objects);
mkdirSync(crds);
const staticSiteCrd = buildCrd();
writeFileSync(join(crds, 'staticsite.yaml'), dump(staticSiteCrd));
writeFileSync(join(crds, 'widget.yaml'), dump(widgetCrd));
for (let i = 0; i < 1000; i++) {
  const [object, fault] = site(i);
  const file = join(objects, `site-${String(i).padStart(4, '0')}.yaml`);
  writeFileSync(file, dump(object));
  expectedFault.set(file, fault);
}
for (let i = 0; i < 200; i++) {
  const [object, fault] = widget(i);
  const file = join(objects, `widget-${String(i).padStart(3, '0')}.yaml`);
  writeFileSync(file, dump(object));
  expectedFault.set(file, fault);
}

/**
 * kubeconform's JSON Schema for a CRD version, as its scripts/openapi2jsonschema.py writes it:
 * int-or-string as a oneOf, and `additionalProperties: false` wherever properties are listed
 * (which is how its -strict flag sees unknown fields).
 */
function jsonSchema(schema: JSONSchemaProps): unknown {
  const convert = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(convert);
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) out[key] = convert(value);
    if (out['x-kubernetes-int-or-string'] === true) return { oneOf: [{ type: 'string' }, { type: 'integer' }] };
    if ('properties' in out && !('additionalProperties' in out)) out.additionalProperties = false;
    return out;
  };
  return convert(schema);
}
for (const crd of [staticSiteCrd, widgetCrd as unknown as typeof staticSiteCrd]) {
  for (const version of crd.spec.versions) {
    const group = join(schemas, crd.spec.group);
    mkdirSync(group, { recursive: true });
    const file = join(group, `${crd.spec.names.kind.toLowerCase()}_${version.name}.json`);
    writeFileSync(file, JSON.stringify(jsonSchema(version.schema.openAPIV3Schema)));
  }
}

// ---- the tools -------------------------------------------------------------------------------

type Verdict = 'valid' | 'invalid';
interface Tool {
  name: string;
  argv: string[];
  verdicts(stdout: string): Map<string, { verdict: Verdict; message: string }>;
}

const tools: Tool[] = [
  {
    name: 'staticsite validate',
    argv: [process.execPath, builtCli(), 'validate', '--crd', crds, '-o', 'json', objects],
    verdicts(stdout) {
      const out = new Map<string, { verdict: Verdict; message: string }>();
      for (const line of stdout.trim().split('\n')) {
        const r = JSON.parse(line) as { file: string; status: string; message: string };
        out.set(r.file, { verdict: r.status === 'valid' ? 'valid' : 'invalid', message: r.message });
      }
      return out;
    },
  },
  {
    name: 'kubeconform',
    argv: [
      join(bin, 'kubeconform'),
      '-strict',
      '-verbose',
      '-output',
      'json',
      '-schema-location',
      `${schemas}/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json`,
      objects,
    ],
    verdicts(stdout) {
      const out = new Map<string, { verdict: Verdict; message: string }>();
      const parsed = JSON.parse(stdout) as { resources: Array<{ filename: string; status: string; msg?: string }> };
      for (const r of parsed.resources) {
        out.set(r.filename, { verdict: r.status === 'statusValid' ? 'valid' : 'invalid', message: r.msg ?? '' });
      }
      return out;
    },
  },
  {
    name: 'kubectl-validate',
    argv: [join(bin, 'kubectl-validate'), '--local-crds', crds, '--version', '1.30', '-o', 'json', objects],
    verdicts(stdout) {
      const out = new Map<string, { verdict: Verdict; message: string }>();
      const parsed = JSON.parse(stdout) as Record<string, Array<{ status: string; message?: string }>>;
      for (const [file, results] of Object.entries(parsed)) {
        const failed = results.find((r) => r.status !== 'Success');
        out.set(file, { verdict: failed ? 'invalid' : 'valid', message: failed?.message ?? '' });
      }
      return out;
    },
  },
];

const measure = (argv: string[]) => measureIn(argv, dir);

const report: Record<string, unknown> = { cpus: cpus().length, loadBefore: loadavg().map((l) => +l.toFixed(2)) };
const samples = new Map<string, { wall: number[]; cpu: number[]; rss: number[] }>();
const lastOut = new Map<string, string>();
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? tools : [...tools].reverse();
  for (const tool of order) {
    const m = measure(tool.argv);
    const s = samples.get(tool.name) ?? { wall: [], cpu: [], rss: [] };
    s.wall.push(m.wall);
    s.cpu.push(m.cpu);
    s.rss.push(m.rssMb);
    samples.set(tool.name, s);
    lastOut.set(tool.name, m.stdout);
  }
}
const count = expectedFault.size;
report.corpus = { objects: count, files: count, sites: 1000, widgets: 200 };
report.tools = Object.fromEntries(
  [...samples].map(([name, s]) => [
    name,
    {
      wallSeconds: median(s.wall),
      wallSpread: spread(s.wall),
      cpuSeconds: +median(s.cpu).toFixed(2),
      objectsPerSecond: Math.round(count / median(s.wall)),
      microsecondsPerObject: Math.round((median(s.wall) / count) * 1e6),
      peakRssMb: median(s.rss),
    },
  ]),
);

// ---- verdicts --------------------------------------------------------------------------------

const verdicts = new Map(tools.map((t) => [t.name, t.verdicts(lastOut.get(t.name) ?? '')]));
const byFault: Record<string, Record<string, string>> = {};
const disagreements: Array<Record<string, string>> = [];
for (const [file, fault] of expectedFault) {
  const row: Record<string, string> = {};
  for (const tool of tools) row[tool.name] = verdicts.get(tool.name)?.get(file)?.verdict ?? 'missing';
  const key = `${file.includes('widget-') ? 'Widget' : 'StaticSite'} ${fault}`;
  byFault[key] ??= Object.fromEntries(tools.map((t) => [t.name, row[t.name] ?? '']));
  if (
    new Set(Object.values(row)).size > 1 &&
    !disagreements.some((d) => d.fault === fault && d.file?.startsWith(file.includes('widget-') ? 'widget' : 'site'))
  ) {
    disagreements.push({
      file: file.slice(objects.length + 1),
      fault,
      ...row,
      ...Object.fromEntries(
        tools.map((t) => [`${t.name} says`, (verdicts.get(t.name)?.get(file)?.message ?? '').slice(0, 160)]),
      ),
    });
  }
}
report.verdictsByFault = byFault;
report.agreement = Object.fromEntries(
  tools.slice(1).map((t) => {
    let same = 0;
    for (const file of expectedFault.keys()) {
      if (verdicts.get(t.name)?.get(file)?.verdict === verdicts.get(tools[0]?.name ?? '')?.get(file)?.verdict) same++;
    }
    return [`${t.name} agrees with staticsite validate`, `${same}/${count}`];
  }),
);
report.sampleDisagreements = disagreements;

// ---- start-up and memory ---------------------------------------------------------------------

const one = join(objects, 'site-0000.yaml');
const startup = { node: [] as number[], ours: [] as number[] };
for (let round = 0; round < Math.max(rounds, 5) * 2; round++) {
  startup.node.push(measure([process.execPath, '-e', '0']).cpu);
  startup.ours.push(measure([process.execPath, builtCli(), 'validate', one]).cpu);
}
report.startupCpuSeconds = {
  'node -e 0': median(startup.node),
  'staticsite validate (one file)': median(startup.ours),
  ratio: +(median(startup.ours) / median(startup.node)).toFixed(2),
  spread: { node: spread(startup.node), ours: spread(startup.ours) },
};

const big = join(dir, 'big.yaml');
const content = `<p>${'x'.repeat(2400)}</p>`;
const docs: string[] = [];
for (let i = 0; i < 16_000; i++) {
  docs.push(
    `apiVersion: staticsite.dev/v1\nkind: StaticSite\nmetadata:\n  name: site-${i}\n  namespace: web\nspec:\n  content: "${content}"\n  replicas: 2\n`,
  );
}
writeFileSync(big, docs.join('---\n'));
const bigRun = measure([process.execPath, builtCli(), 'validate', '-o', 'json', big]);
const inputMb = statSync(big).size / (1 << 20);
report.largeFile = {
  inputMb: +inputMb.toFixed(1),
  objects: 16_000,
  wallSeconds: bigRun.wall,
  objectsPerSecond: Math.round(16_000 / bigRun.wall),
  peakRssMb: bigRun.rssMb,
  rssOverInput: +(bigRun.rssMb / inputMb).toFixed(2),
};
report.loadAfter = loadavg().map((l) => +l.toFixed(2));
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify(report, null, 2));
