import { expect } from 'chai';
import { pino } from 'pino';
import { type ReplacedReason, ReviewPool, type ReviewPoolOptions } from '../../webhook/isolation/review-pool.ts';

const script = (name: string) => new URL(`../fixtures/review-workers/${name}`, import.meta.url);

function pool(overrides: Partial<ReviewPoolOptions> = {}) {
  const replaced: ReplacedReason[] = [];
  const lengths: number[] = [];
  const lines: string[] = [];
  const reviews = new ReviewPool({
    workers: 2,
    deadlineMs: 1_000,
    queueTimeoutMs: 1_000,
    idleMs: 0,
    resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8 },
    workerData: { baseDomain: 'example.com', limits: {} },
    logger: pino({ level: 'info' }, { write: (line: string) => lines.push(line) }),
    observer: { replaced: (reason) => replaced.push(reason), queueLength: (n) => lengths.push(n) },
    script: script('scripted.ts'),
    ...overrides,
  });
  return { reviews, replaced, lengths, lines };
}

const task = (command: string) => ({
  path: '/validate' as const,
  contentType: 'application/json',
  body: Buffer.from(command),
});

describe('webhook: the review pool (scripted workers)', function () {
  this.timeout(20_000);

  it('answers in order of arrival with every worker busy, and hands each body over whole', async () => {
    const { reviews, lengths } = pool();
    await reviews.start();
    try {
      const answers = await Promise.all(
        ['sleep:50', 'sleep:50', 'answer', 'answer'].map((c) => reviews.evaluate(task(c))),
      );
      expect(answers.map((a) => (a.kind === 'admission' ? a.response.warnings?.[0] : a.kind))).to.deep.equal([
        'sleep:50',
        'sleep:50',
        'answer',
        'answer',
      ]);
      expect(Math.max(...lengths)).to.equal(2);
      expect(lengths.at(-1)).to.equal(0);
    } finally {
      await reviews.close();
    }
  });

  it('a worker that exits mid-review: that review is a 500 denial in its own words, the worker replaced', async () => {
    const { reviews, replaced, lines } = pool();
    await reviews.start();
    try {
      const answer = await reviews.evaluate(task('exit'));
      expect(answer.kind).to.equal('admission');
      if (answer.kind !== 'admission') return;
      expect(answer.response).to.deep.include({ allowed: false });
      expect(answer.response.uid).to.match(/^uid-\d+$/);
      expect(answer.response.status).to.include({
        code: 500,
        reason: 'InternalError',
        message: 'internal error: the review worker stopped; see the webhook log',
      });
      expect(replaced).to.deep.equal(['exit']);
      expect(lines.join('\n')).to.include('a review worker stopped: it is replaced');
      expect((await reviews.evaluate(task('answer'))).kind).to.equal('admission');
    } finally {
      await reviews.close();
    }
  });

  it('a review waiting past the queue timeout gets a 503 naming the busy workers; the queue does not grow', async () => {
    const { reviews } = pool({ workers: 1, queueTimeoutMs: 100, deadlineMs: 5_000 });
    await reviews.start();
    try {
      const busy = reviews.evaluate(task('sleep:400'));
      const waiting = await reviews.evaluate(task('answer'));
      expect(waiting).to.deep.equal({
        kind: 'failed',
        code: 503,
        message: "the webhook's 1 review workers were busy for 100 ms; retry",
      });
      expect((await busy).kind).to.equal('admission');
    } finally {
      await reviews.close();
    }
  });

  it('a worker that cannot start fails the start, naming its script and error', async () => {
    const { reviews } = pool({ script: script('broken.ts') });
    try {
      await reviews.start();
      expect.fail('start resolved');
    } catch (error) {
      expect((error as Error).message).to.match(/review worker .*broken\.ts did not start: this worker cannot start/);
    } finally {
      await reviews.close();
    }
  });

  it('close answers what is still queued or running with 503, and later reviews too', async () => {
    const { reviews } = pool({ workers: 1 });
    await reviews.start();
    const running = reviews.evaluate(task('sleep:300'));
    const queued = reviews.evaluate(task('answer'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await reviews.close();
    const [a, b] = await Promise.all([running, queued]);
    expect(b).to.deep.equal({ kind: 'failed', code: 503, message: 'the webhook is shutting down' });
    expect(a.kind === 'admission' && a.response.status?.code).to.equal(503);
    expect(await reviews.evaluate(task('answer'))).to.deep.equal({
      kind: 'failed',
      code: 503,
      message: 'the webhook is shutting down',
    });
  });

  it('a worker idle for idleMs stops, is not counted as replaced, and starts again for the next review', async () => {
    // idleMs long enough that the first worker, done, does not retire while the second one starts on
    // a loaded machine; the retirement itself is waited for, not timed.
    const { reviews, replaced } = pool({ workers: 2, idleMs: 1_000 });
    await reviews.start();
    try {
      expect(reviews.readyWorkers).to.equal(2);
      for (const until = Date.now() + 10_000; reviews.readyWorkers > 0 && Date.now() < until; ) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(reviews.readyWorkers, 'both retired').to.equal(0);
      expect(reviews.available, 'a review sent now still gets a worker').to.equal(true);
      const answers = await Promise.all([reviews.evaluate(task('answer')), reviews.evaluate(task('sleep:50'))]);
      expect(answers.map((a) => (a.kind === 'admission' ? a.response.warnings?.[0] : a.kind))).to.deep.equal([
        'answer',
        'sleep:50',
      ]);
      expect(reviews.readyWorkers, 'two waiting reviews started both again').to.equal(2);
      expect(replaced).to.deep.equal([]);
    } finally {
      await reviews.close();
    }
  });

  it('is not available while the only worker is being replaced after it exited', async () => {
    const { reviews } = pool({ workers: 1 });
    await reviews.start();
    try {
      await reviews.evaluate(task('exit'));
      expect(reviews.available).to.equal(false);
      expect((await reviews.evaluate(task('answer'))).kind).to.equal('admission');
      expect(reviews.available).to.equal(true);
    } finally {
      await reviews.close();
    }
  });

  it('retireInitialWorkers: the first worker stops once it proved it loads; a review starts one again', async () => {
    const { reviews, replaced } = pool({ workers: 2, initialWorkers: 1, retireInitialWorkers: true, idleMs: 10_000 });
    await reviews.start();
    try {
      expect(reviews.readyWorkers, 'none held after the start').to.equal(0);
      expect(reviews.available, 'a review sent now still gets a worker').to.equal(true);
      const answer = await reviews.evaluate(task('answer'));
      expect(answer.kind === 'admission' ? answer.response.warnings?.[0] : answer.kind).to.equal('answer');
      expect(reviews.readyWorkers, 'the review started one, which idles for idleMs').to.equal(1);
      expect(replaced).to.deep.equal([]);
    } finally {
      await reviews.close();
    }
  });

  it('retireInitialWorkers: a worker that cannot load still fails the start', async () => {
    const { reviews } = pool({ script: script('broken.ts'), retireInitialWorkers: true });
    const started = await reviews.start().then(
      () => undefined,
      (error: Error) => error.message,
    );
    await reviews.close();
    expect(started).to.match(/review worker .*broken\.ts did not start: this worker cannot start/);
  });

  it('starts initialWorkers with the pool and the others only when reviews wait for them', async () => {
    const { reviews } = pool({ workers: 2, initialWorkers: 1 });
    expect(reviews.available, 'not before the first worker is ready').to.equal(false);
    await reviews.start();
    try {
      expect(reviews.readyWorkers).to.equal(1);
      await Promise.all([reviews.evaluate(task('sleep:50')), reviews.evaluate(task('sleep:50'))]);
      expect(reviews.readyWorkers, 'the second review started the second worker').to.equal(2);
    } finally {
      await reviews.close();
    }
  });
});
