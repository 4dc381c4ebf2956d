/**
 * What the in-thread bounds let one review cost the main thread: for every hostile shape
 * (test/support/hostile-reviews.ts), the largest review within REVIEW_ISOLATION.inThread (bytes,
 * values, depth), decided in this thread as the webhook decides it, timed over 50 runs after 20
 * warm-up runs. The worst of these is how long an ordinary-looking review can hold the event loop.
 * Run: node bench/in-thread-bound.ts
 */
import { cpus, loadavg } from 'node:os';
import { HOSTILE_SHAPES } from '../test/support/hostile-reviews.ts';
import { shapeProblem } from '../webhook/review/codec.ts';
import { decide, siteDecisions } from '../webhook/review/pipeline.ts';
import { REVIEW_ISOLATION } from '../webhook/server-settings.ts';

const { maxBytes, maxValues, maxDepth } = REVIEW_ISOLATION.inThread;
const decisions = siteDecisions({ baseDomain: 'sites.test' });
const within = (review: object) => {
  const body = Buffer.from(JSON.stringify(review));
  return body.length <= maxBytes && shapeProblem(body, maxDepth, maxValues) === undefined;
};

/** The largest n whose review is within the bounds, to 1 %. */
function largest(build: (n: number) => object): number {
  let low = 1;
  let high = 2;
  while (within(build(high)) && high < 1e7) {
    low = high;
    high *= 2;
  }
  while (high - low > Math.max(1, low / 100)) {
    const mid = Math.floor((low + high) / 2);
    if (within(build(mid))) low = mid;
    else high = mid;
  }
  return low;
}

const rows = [];
for (const shape of HOSTILE_SHAPES) {
  const n = largest(shape.build);
  const body = Buffer.from(JSON.stringify(shape.build(n)));
  for (const path of shape.paths) {
    const task = { path, contentType: 'application/json', body };
    for (let i = 0; i < 20; i++) decide(decisions, task);
    const started = performance.now();
    for (let i = 0; i < 50; i++) decide(decisions, task);
    rows.push({ path, shape: shape.name, n, bytes: body.length, ms: +((performance.now() - started) / 50).toFixed(2) });
  }
}
rows.sort((a, b) => b.ms - a.ms);
console.log(
  JSON.stringify(
    {
      machine: `${cpus().length} x ${cpus()[0]?.model}, Node ${process.version}`,
      load: loadavg()[0],
      bounds: REVIEW_ISOLATION.inThread,
      rows,
    },
    null,
    1,
  ),
);
