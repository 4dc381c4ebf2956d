import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { pino } from 'pino';
import { MemoryHostnameIndex } from '../../webhook/admission/hostname-index.ts';
import { ReviewPool } from '../../webhook/isolation/review-pool.ts';
import type { ReviewPath, ReviewTask } from '../../webhook/review/codec.ts';
import { crossObjectSteps } from '../../webhook/review/cross-object.ts';
import {
  createReviewPipeline,
  decide,
  type ReviewIsolation,
  type ReviewPlacement,
  siteDecisions,
} from '../../webhook/review/pipeline.ts';
import { REVIEW_ISOLATION } from '../../webhook/server-settings.ts';
import { HOSTILE_SHAPES } from '../support/hostile-reviews.ts';

const fixtures = new URL('../fixtures/', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, fixtures));
const task = (path: ReviewPath, body: Buffer | string): ReviewTask => ({
  path,
  contentType: 'application/json',
  body: Buffer.isBuffer(body) ? body : Buffer.from(body),
});

/** Every review the pipeline is given: the fixtures, each on its paths, and the hostile shapes at a few sizes. */
function reviews(): ReviewTask[] {
  const admission = readdirSync(new URL('admission/', fixtures)).map((name) => read(`admission/${name}`));
  const tasks = admission.flatMap((body) => [task('/mutate', body), task('/validate', body)]);
  tasks.push(...readdirSync(new URL('conversion/', fixtures)).map((n) => task('/convert', read(`conversion/${n}`))));
  for (const shape of HOSTILE_SHAPES) {
    for (const n of [1, 7, 300, 3_000]) {
      const body = JSON.stringify(shape.build(n));
      for (const path of shape.paths) tasks.push(task(path, body));
    }
  }
  // Not reviews at all: refused the same way wherever they are read.
  tasks.push(task('/validate', '{"kind":"AdmissionReview"'), task('/convert', '[]'), task('/mutate', '{}'));
  return tasks;
}

describe('webhook: the review pipeline', function () {
  this.timeout(60_000);
  const decisions = siteDecisions({ baseDomain: 'sites.test' });
  const hostnames = new MemoryHostnameIndex();
  // The fixtures' hostnames are held by other sites: the unique-hostname step denies their claims.
  for (const name of ['shop.web.sites.example.com', 'shop.capture.sites.example.com', 's1.example.com']) {
    hostnames.set({ namespace: 'other', name: `holder-${name.split('.')[0]}` }, name);
  }
  const steps = crossObjectSteps({ hostnames });

  it('answers every review the same, byte for byte, whether the main thread or a review worker decided it', async () => {
    const pool = new ReviewPool({
      ...REVIEW_ISOLATION,
      workerData: { baseDomain: 'sites.test', limits: {} },
      logger: pino({ level: 'silent' }),
    });
    await pool.start();
    try {
      const inThread = createReviewPipeline({ decisions, steps });
      const noneInThread = { maxBytes: 0, maxValues: 0, maxDepth: 0 };
      const isolated = createReviewPipeline({ decisions, steps, isolation: { workers: pool, inThread: noneInThread } });
      const all = reviews();
      let denied = 0;
      for (const review of all) {
        const here = await inThread(review);
        const there = await isolated(review);
        expect(there, `${review.path} ${review.body.length} bytes`).to.deep.equal(here);
        if (here.kind === 'review' && here.text.includes('"code":422')) denied++;
      }
      expect(all.length).to.be.above(100);
      expect(denied, 'the hostname step denied some claims on both paths').to.be.above(0);
    } finally {
      await pool.close();
    }
  });

  it('decides a review within every in-thread bound in the main thread, and one past any bound in a worker', async () => {
    const sent: ReviewTask[] = [];
    const workers: ReviewIsolation = {
      evaluate: async (t) => {
        sent.push(t);
        return { kind: 'failed', code: 503, message: 'isolated' };
      },
    };
    const placements: ReviewPlacement[] = [];
    const bounds = { maxBytes: 4096, maxValues: 200, maxDepth: 8 };
    const pipeline = createReviewPipeline({
      decisions,
      isolation: { workers, inThread: bounds },
      placed: (where) => placements.push(where),
    });
    const ordinary = read('admission/create-v1.json');
    const answered = pipeline(task('/validate', ordinary));
    expect(answered, 'answered synchronously, where it landed').not.to.be.instanceOf(Promise);

    const review = JSON.parse(ordinary.toString());
    const tooLong = { ...review, padding: 'x'.repeat(4096) };
    const tooMany = { ...review, padding: Array.from({ length: 200 }, () => 0) };
    let deep: unknown = 1;
    for (let i = 0; i < 8; i++) deep = [deep];
    const tooDeep = { ...review, padding: deep };
    for (const body of [tooLong, tooMany, tooDeep]) {
      expect(await pipeline(task('/validate', JSON.stringify(body)))).to.deep.equal({
        kind: 'failed',
        code: 503,
        message: 'isolated',
      });
    }
    expect(placements).to.deep.equal(['main', 'worker', 'worker', 'worker']);
    expect(sent).to.have.length(3);
  });

  it('runs the cross-object steps in their order on a decision a worker made', async () => {
    const order: string[] = [];
    const pipeline = createReviewPipeline({
      decisions,
      steps: [
        (verdict) => {
          order.push('first');
          return verdict;
        },
        (verdict) => {
          order.push('second');
          return { ...verdict, response: { ...verdict.response, warnings: ['from the second step'] } };
        },
      ],
      isolation: {
        workers: { evaluate: async (t) => decide(decisions, t) },
        inThread: { maxBytes: 0, maxValues: 0, maxDepth: 0 },
      },
    });
    const answer = await pipeline(task('/validate', read('admission/create-v1.json')));
    expect(order).to.deep.equal(['first', 'second']);
    expect(answer.kind === 'review' && JSON.parse(answer.text).response.warnings).to.deep.equal([
      'from the second step',
    ]);
  });
});
