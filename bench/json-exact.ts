/**
 * What reading every int64 exactly costs the webhook's hot path: CPU per decision (decode, decide,
 * encode) for the review kube-apiserver sends on a StaticSite create, on /validate and /mutate, and
 * per JSON.parse of its body against parseJsonInt64 (the 16-digit scan, then JSON.parse). Rounds
 * alternate; the median of each is printed. Run: node bench/json-exact.ts [rounds] [reviews per round]
 */
import { cpus } from 'node:os';
import { decide, siteDecisions } from '../webhook/review/pipeline.ts';
import { validateReview } from './validate-review.ts';

const rounds = Number(process.argv[2] ?? 7);
const perRound = Number(process.argv[3] ?? 20_000);
const text = validateReview().text;
const body = Buffer.from(text);
const decisions = siteDecisions({ baseDomain: 'sites.test' });
const contentType = 'application/json';

const json = await import('../crd/json-int64.ts').catch(() => undefined);
const cases: Record<string, () => unknown> = {
  'decide /validate': () => decide(decisions, { path: '/validate', contentType, body }),
  'decide /mutate': () => decide(decisions, { path: '/mutate', contentType, body }),
  'JSON.parse': () => JSON.parse(text),
  ...(json && { parseJsonInt64: () => json.parseJsonInt64(text) }),
};

function microsPerCall(run: () => unknown): number {
  const start = process.cpuUsage();
  for (let i = 0; i < perRound; i++) run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / perRound;
}

const samples = new Map<string, number[]>(Object.keys(cases).map((k) => [k, []]));
for (const run of Object.values(cases)) microsPerCall(run); // warm up
for (let r = 0; r < rounds; r++)
  for (const [name, run] of Object.entries(cases)) samples.get(name)?.push(microsPerCall(run));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
console.log(`${body.length}-byte review, ${rounds} rounds of ${perRound}, ${cpus()[0]?.model}`);
for (const [name, xs] of samples) console.log(`${name}: ${median(xs).toFixed(2)} µs CPU (median)`);
