import type { Clock, TimerHandle } from '../../clock/clock.ts';
import type { RateLimiter } from './rate-limiter.ts';

/** What the queue reports to metrics (client-go's workqueue metrics provider), with the queue's clock. */
export interface WorkQueueObserver {
  depth(n: number): void;
  /** `key` became due (it was not already); `now` in ms. */
  added(key: string, now: number): void;
  /** A worker took `key`. */
  got(key: string, now: number): void;
  /** The worker finished `key`. */
  finished(key: string, now: number): void;
  retried(): void;
}

interface Waiting {
  readyAt: number;
  timer: TimerHandle;
}

/**
 * A rate-limited, delaying work queue with client-go's guarantees: a key is queued at most once, a
 * key being processed is never handed to a second worker (a change meanwhile re-queues it when the
 * first worker calls done), failures wait per-key exponential backoff, and a fresh add() makes a
 * waiting key due at once.
 */
export class WorkQueue {
  private readonly clock: Clock;
  private readonly limiter: RateLimiter;
  private readonly observer: WorkQueueObserver | undefined;
  private readonly queue: string[] = [];
  private head = 0;
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly waiting = new Map<string, Waiting>();
  private readonly getters: Array<(key: string | undefined) => void> = [];
  private drained: Array<() => void> = [];
  private shuttingDown = false;

  constructor(clock: Clock, limiter: RateLimiter, observer?: WorkQueueObserver) {
    this.clock = clock;
    this.limiter = limiter;
    this.observer = observer;
  }

  /** Queues `key` now (cancelling any backoff wait), unless it is already queued. */
  add(key: string): void {
    if (this.shuttingDown) return;
    this.cancelWait(key);
    if (this.dirty.has(key)) return;
    this.dirty.add(key);
    this.observer?.added(key, this.clock.now());
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Queues `key` after `delayMs`; an earlier pending time for the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    if (this.dirty.has(key)) return; // already due, or due again the moment its worker finishes
    const readyAt = this.clock.now() + delayMs;
    const existing = this.waiting.get(key);
    if (existing && existing.readyAt <= readyAt) return;
    if (existing) this.clock.clearTimeout(existing.timer);
    const timer = this.clock.setTimeout(() => {
      this.waiting.delete(key);
      this.add(key);
    }, delayMs);
    this.waiting.set(key, { readyAt, timer });
  }

  /** Queues `key` after its rate limiter's backoff: the retry path after a failure. */
  addRateLimited(key: string): number {
    const delay = this.limiter.when(key);
    this.observer?.retried();
    this.addAfter(key, delay);
    return delay;
  }

  /** Forgets the failures of `key`: the next failure starts the backoff again at its base. */
  forget(key: string): void {
    this.limiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.limiter.numRequeues(key);
  }

  /** The next key to process, or undefined once the queue shuts down. */
  get(): Promise<string | undefined> {
    const key = this.pop();
    if (key !== undefined) return Promise.resolve(key);
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Marks `key` finished; if it changed while processing, it goes back in the queue. */
  done(key: string): void {
    if (this.processing.delete(key)) this.observer?.finished(key, this.clock.now());
    if (this.dirty.has(key)) this.push(key);
    if (this.processing.size === 0) {
      const waiters = this.drained;
      this.drained = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Keys waiting to be handed out (the queue depth). */
  len(): number {
    return this.queue.length - this.head;
  }

  isWaiting(key: string): boolean {
    return this.waiting.has(key);
  }

  isProcessing(key: string): boolean {
    return this.processing.has(key);
  }

  /** Stops handing out keys; pending getters receive undefined; backoff timers are cancelled. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.waiting.values()) this.clock.clearTimeout(timer);
    this.waiting.clear();
    for (const resolve of this.getters.splice(0)) resolve(undefined);
  }

  /** Resolves once no key is being processed. */
  drain(): Promise<void> {
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  private cancelWait(key: string): void {
    const waiting = this.waiting.get(key);
    if (!waiting) return;
    this.clock.clearTimeout(waiting.timer);
    this.waiting.delete(key);
  }

  private push(key: string): void {
    this.cancelWait(key);
    const getter = this.getters.shift();
    if (getter && !this.shuttingDown) {
      this.dirty.delete(key);
      this.processing.add(key);
      this.observer?.got(key, this.clock.now());
      getter(key);
      return;
    }
    this.queue.push(key);
    this.observer?.depth(this.len());
  }

  private pop(): string | undefined {
    if (this.shuttingDown || this.head >= this.queue.length) return undefined;
    const key = this.queue[this.head++] as string;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    this.dirty.delete(key);
    this.processing.add(key);
    this.observer?.depth(this.len());
    this.observer?.got(key, this.clock.now());
    return key;
  }
}
