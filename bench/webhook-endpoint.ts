/**
 * The webhook's review endpoint in-process, without network or TLS: what one POST /validate costs in
 * our code (body handling, JSON decode and depth check, review checks, the schema engine, the CEL
 * rules, the unique-hostname lookup against 1,000 sites, the JSON answer, metrics). The request and
 * response are minimal stand-ins for Node's IncomingMessage and ServerResponse. Baseline, in the same
 * run: JSON.parse of the same body and JSON.stringify of an answer, the least any webhook does.
 * Run: npm run bench:webhook-endpoint [-- reviews]   (default 400,000; reports the best of 10 batches)
 */
import { EventEmitter } from 'node:events';
import { cpus } from 'node:os';
import { pino } from 'pino';
import { MemoryHostnameIndex } from '../webhook/admission/hostname-index.ts';
import { WebhookMetrics } from '../webhook/http/metrics.ts';
import { createReviewEndpoint } from '../webhook/http/review-endpoint.ts';
import { crossObjectSteps } from '../webhook/review/cross-object.ts';
import { createReviewPipeline, siteDecisions } from '../webhook/review/pipeline.ts';
import { REVIEW_ISOLATION } from '../webhook/server-settings.ts';
import { validateReview } from './validate-review.ts';

const reviewBody = validateReview();
const body = Buffer.from(reviewBody.text);
const hostnames = new MemoryHostnameIndex();
for (let i = 0; i < 1000; i++) hostnames.set({ namespace: 'web', name: `site-${i}` }, `site-${i}.web.sites.test`);
hostnames.synced = true;
// The server's pipeline with its in-thread bounds: the review is within them, so it is placed in
// this thread (the workers are never asked).
const pipeline = createReviewPipeline({
  decisions: siteDecisions({ baseDomain: 'sites.test' }),
  steps: crossObjectSteps({ hostnames }),
  isolation: {
    inThread: REVIEW_ISOLATION.inThread,
    workers: { evaluate: () => Promise.reject(new Error('the benchmark review is within the in-thread bounds')) },
  },
});
const endpoint = createReviewEndpoint({
  pipeline,
  metrics: new WebhookMetrics(),
  logger: pino({ level: 'warn' }),
});

class Request extends EventEmitter {
  headers = { 'content-type': 'application/json', 'content-length': String(body.length) };
  resume() {}
}
class Response extends EventEmitter {
  status = 0;
  text = '';
  writeHead(status: number) {
    this.status = status;
    return this;
  }
  end(text: string) {
    this.text = text;
    this.emit('close');
  }
}

function review(): Response {
  const req = new Request();
  const res = new Response();
  endpoint('/validate', req as never, res as never);
  req.emit('data', body);
  req.emit('end');
  return res;
}

/** The least any webhook does per review: decode the body and encode an answer echoing the uid. */
function parseAndAnswer(): string {
  const parsed = JSON.parse(body.toString('utf8')) as { request: { uid: string } };
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: parsed.request.uid, allowed: true },
  });
}

/** The answers of a turn are written in its check phase (http/answer-batch.ts): a turn of 100 reviews. */
const REVIEWS_PER_TURN = 100;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function runBatch(run: () => unknown, batch: number) {
  for (let i = 0; i < batch; i++) {
    run();
    if (i % REVIEWS_PER_TURN === REVIEWS_PER_TURN - 1) await nextTurn();
  }
  await nextTurn();
}

/** Microseconds per call in 10 batches after a warm-up batch: best and median. */
async function measure(run: () => unknown, batch: number) {
  await runBatch(run, batch);
  const perBatch: number[] = [];
  for (let b = 0; b < 10; b++) {
    const start = performance.now();
    await runBatch(run, batch);
    perBatch.push(((performance.now() - start) * 1000) / batch);
  }
  perBatch.sort((a, b) => a - b);
  return { bestMicroseconds: +(perBatch[0] ?? 0).toFixed(2), medianMicroseconds: +(perBatch[5] ?? 0).toFixed(2) };
}

const total = Number(process.argv[2] ?? 400_000);
const batch = Math.ceil(total / 10);
const first = review();
await nextTurn();
if (first.status !== 200 || !first.text.includes('"allowed":true')) throw new Error(`unexpected answer: ${first.text}`);
const baseline = await measure(parseAndAnswer, batch);
const endpointCost = await measure(review, batch);
console.log(
  JSON.stringify({
    machine: `${cpus().length} x ${cpus()[0]?.model}, Node ${process.version}`,
    review: reviewBody.name,
    reviewBytes: body.length,
    reviewsPerBatch: batch,
    baselineParseAndAnswer: baseline,
    reviewEndpoint: endpointCost,
    ratioOfBest: +(endpointCost.bestMicroseconds / baseline.bestMicroseconds).toFixed(1),
  }),
);
