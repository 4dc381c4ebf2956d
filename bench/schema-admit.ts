/**
 * Benchmark: admit() on a StaticSite in-process (decode: prune + metadata coercion, default,
 * OpenAPI validation, metadata and list-type checks; no CEL), with the schema compiled once.
 *
 *   PATH=$PWD/node_modules/.bin:$PATH node bench/schema-admit.ts [--batches N] [--batch-size N]
 *
 * Prints ns/op (median, p10 and p90 of per-batch means) for a few object shapes.
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { buildCrd } from '../api/index.ts';
import { admit, compileCrdVersion } from '../crd/index.ts';

const { values } = parseArgs({
  options: { batches: { type: 'string', default: '200' }, 'batch-size': { type: 'string', default: '1000' } },
});
const batches = Number(values.batches);
const batchSize = Number(values['batch-size']);

// The CRD without its CEL rules: this measures the schema half of the engine (bench:cel measures the rules).
const schema = compileCrdVersion(buildCrd({ withoutCelRules: true }), 'v1');
const options = { namespace: 'default', fieldValidation: 'Warn' as const };

const shapes: Record<string, unknown> = {
  'valid StaticSite (defaults applied)': {
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: {
      name: 'shop',
      namespace: 'default',
      labels: { app: 'shop' },
      finalizers: ['staticsite.dev/external-record'],
    },
    spec: { content: '<html><body><h1>Welcome to the shop</h1></body></html>', hostname: 'shop.example.com' },
  },
  'valid StaticSite with status conditions': {
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: { name: 'shop', namespace: 'default' },
    spec: { content: '<h1>hi</h1>', replicas: 3, tier: 'prod', hostname: 'shop.example.com' },
    status: {
      observedGeneration: 2,
      readyReplicas: 3,
      url: 'https://shop.example.com',
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Available',
          message: 'all pods ready',
          lastTransitionTime: '2026-11-29T12:00:00Z',
        },
        {
          type: 'Progressing',
          status: 'False',
          reason: 'Done',
          message: '',
          lastTransitionTime: '2026-11-29T12:00:00Z',
        },
      ],
    },
  },
  'invalid StaticSite (3 errors + unknown field)': {
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: { name: 'shop', namespace: 'default' },
    spec: { replicas: 0, tier: 'qa', colour: 'red' },
  },
};

/** Per-batch means in ns/op: wall clock, and CPU time of this process (robust on a busy machine). */
function measure(object: unknown): { wall: number[]; cpu: number[] } {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let b = 0; b < batches; b++) {
    const cpuStart = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (let i = 0; i < batchSize; i++) admit(schema, object, options);
    wall.push(Number(process.hrtime.bigint() - start) / batchSize);
    const used = process.cpuUsage(cpuStart);
    cpu.push(((used.user + used.system) * 1000) / batchSize);
  }
  return { wall: wall.sort((x, y) => x - y), cpu: cpu.sort((x, y) => x - y) };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;

process.stdout.write(`node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} x${cpus().length}\n`);
process.stdout.write(
  `${batches} batches of ${batchSize} admit() calls per shape; ns/op of the batch means; load average ${loadavg()[0]?.toFixed(2)}\n\n`,
);
for (const [name, object] of Object.entries(shapes)) {
  const first = admit(schema, object, options);
  if (name.startsWith('valid') !== first.allowed)
    throw new Error(`${name}: unexpected verdict ${first.code} ${first.message}`);
  measure(object); // warm up
  const { wall, cpu } = measure(object);
  const cols = (sorted: number[]) =>
    `median ${pct(sorted, 0.5).toFixed(0).padStart(6)}  p10 ${pct(sorted, 0.1).toFixed(0).padStart(6)}  p90 ${pct(sorted, 0.9).toFixed(0).padStart(6)}`;
  process.stdout.write(`${name}\n  wall ns/op: ${cols(wall)}\n  cpu  ns/op: ${cols(cpu)}\n`);
}
