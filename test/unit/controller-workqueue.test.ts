import { expect } from 'chai';
import {
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
} from '../../controller/queue/rate-limiter.ts';
import { WorkQueue } from '../../controller/queue/work-queue.ts';
import { ManualClock, settle } from '../support/kube/index.ts';

describe('controller: rate limiter', () => {
  // Expected values: client-go util/workqueue/default_rate_limiters_test.go, TestItemExponentialFailureRateLimiter.
  it('doubles per key from the base delay and forgets on success, like client-go', () => {
    const limiter = new ItemExponentialFailureRateLimiter(1, 1000);
    expect([1, 2, 3, 4, 5].map(() => limiter.when('one'))).to.deep.equal([1, 2, 4, 8, 16]);
    expect(limiter.numRequeues('one')).to.equal(5);
    expect([limiter.when('two'), limiter.when('two')]).to.deep.equal([1, 2]);
    expect(limiter.numRequeues('two')).to.equal(2);
    limiter.forget('one');
    expect(limiter.numRequeues('one')).to.equal(0);
    expect(limiter.when('one')).to.equal(1);
  });

  it('defaults to 5 ms doubling, capped at 1000 s (client-go DefaultTypedControllerRateLimiter)', () => {
    const limiter = defaultControllerRateLimiter();
    const delays = Array.from({ length: 40 }, () => limiter.when('k'));
    expect(delays.slice(0, 4)).to.deep.equal([5, 10, 20, 40]);
    // 5 ms * 2^17 = 655.36 s, 2^18 would be 1310.72 s: capped.
    expect(delays[17]).to.equal(655_360);
    expect(delays[18]).to.equal(1_000_000);
    expect(delays[39]).to.equal(1_000_000);
  });
});

describe('controller: work queue', () => {
  let clock: ManualClock;
  let queue: WorkQueue;

  beforeEach(() => {
    clock = new ManualClock();
    queue = new WorkQueue(clock, new ItemExponentialFailureRateLimiter(5, 1_000_000));
  });

  it('holds each key at most once', async () => {
    queue.add('a');
    queue.add('b');
    queue.add('a');
    expect(queue.len()).to.equal(2);
    expect(await queue.get()).to.equal('a');
    expect(await queue.get()).to.equal('b');
    expect(queue.len()).to.equal(0);
  });

  it('never hands a key being processed to a second worker; a change meanwhile re-queues it on done', async () => {
    queue.add('a');
    const first = await queue.get();
    queue.add('a');
    expect(queue.len()).to.equal(0);
    let second: string | undefined;
    void queue.get().then((k) => {
      second = k;
    });
    await settle();
    expect(second).to.equal(undefined);
    queue.done(first as string);
    await settle();
    expect(second).to.equal('a');
  });

  it('runs N workers concurrently but never two on the same key', async () => {
    const active = new Set<string>();
    let overlap = 0;
    let processed = 0;
    const worker = async () => {
      for (;;) {
        const key = await queue.get();
        if (key === undefined) return;
        if (active.has(key)) overlap++;
        active.add(key);
        await settle(2);
        if (processed < 40) queue.add(key); // a new event for the same key while it is processed
        processed++;
        active.delete(key);
        queue.done(key);
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    for (const k of ['a', 'b', 'c', 'a', 'b']) queue.add(k);
    while (processed < 40) await settle(2);
    await settle();
    queue.shutDown();
    await Promise.all(workers);
    expect(overlap).to.equal(0);
    expect(processed).to.be.greaterThanOrEqual(40);
  });

  it('delays a failed key by its backoff: 5, 10, 20 ms', async () => {
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      queue.add('a');
      const key = (await queue.get()) as string;
      delays.push(queue.addRateLimited(key));
      queue.done(key);
      expect(queue.len()).to.equal(0);
      await clock.advance(delays[i] as number);
      expect(queue.len()).to.equal(1);
      await queue.get();
      queue.done('a');
    }
    expect(delays).to.deep.equal([5, 10, 20]);
  });

  it('resets the backoff after a success (forget)', async () => {
    queue.addRateLimited('a');
    queue.addRateLimited('a');
    expect(queue.numRequeues('a')).to.equal(2);
    queue.forget('a');
    expect(queue.addRateLimited('a')).to.equal(5);
  });

  it('makes a waiting key due at once when a new event adds it', async () => {
    queue.addRateLimited('a');
    queue.addRateLimited('a');
    queue.addRateLimited('a');
    expect(queue.isWaiting('a')).to.equal(true);
    expect(queue.len()).to.equal(0);
    queue.add('a');
    expect(queue.isWaiting('a')).to.equal(false);
    expect(queue.len()).to.equal(1);
    expect(await queue.get()).to.equal('a');
    queue.done('a');
    await clock.advance(60_000);
    expect(queue.len()).to.equal(0); // the old backoff timer no longer fires
  });

  it('keeps the earlier time when a waiting key is delayed again', async () => {
    queue.addAfter('a', 100);
    queue.addAfter('a', 5_000);
    await clock.advance(100);
    expect(queue.len()).to.equal(1);
  });

  it('shuts down: waiting getters receive undefined and backoff timers are cancelled', async () => {
    const pending = queue.get();
    queue.addAfter('b', 10);
    queue.shutDown();
    expect(await pending).to.equal(undefined);
    expect(clock.pending()).to.equal(0);
    queue.add('c');
    expect(await queue.get()).to.equal(undefined);
  });

  it('drain resolves once the keys in flight are done', async () => {
    queue.add('a');
    const key = (await queue.get()) as string;
    let drained = false;
    void queue.drain().then(() => {
      drained = true;
    });
    await settle();
    expect(drained).to.equal(false);
    queue.done(key);
    await settle();
    expect(drained).to.equal(true);
  });

  it('reports depth, adds, takes, finishes and retries to its observer, with its clock', async () => {
    const seen = { depth: [] as number[], events: [] as string[], retried: 0 };
    const q = new WorkQueue(clock, new ItemExponentialFailureRateLimiter(5, 1000), {
      depth: (n) => seen.depth.push(n),
      added: (key, at) => seen.events.push(`added ${key} ${at}`),
      got: (key, at) => seen.events.push(`got ${key} ${at}`),
      finished: (key, at) => seen.events.push(`finished ${key} ${at}`),
      retried: () => seen.retried++,
    });
    const start = clock.now();
    q.add('a');
    q.add('b');
    q.add('a'); // already due: not an add
    await clock.advance(10);
    const key = await q.get();
    await clock.advance(5);
    q.done(key ?? '');
    q.addRateLimited('a');
    expect(seen.depth).to.deep.equal([1, 2, 1]);
    expect(seen.retried).to.equal(1);
    expect(seen.events).to.deep.equal([
      `added a ${start}`,
      `added b ${start}`,
      `got a ${start + 10}`,
      `finished a ${start + 15}`,
    ]);
  });
});
