/** Decides how long a failed key waits before its next try (client-go's workqueue.RateLimiter). */
export interface RateLimiter {
  /** The delay before the next try of `key`; counts one more failure. */
  when(key: string): number;
  /** Resets the failure count of `key` (after a success). */
  forget(key: string): void;
  numRequeues(key: string): number;
}

/** Per-key exponential backoff, `baseMs * 2^failures` capped at `maxMs`: client-go's ItemExponentialFailureRateLimiter. */
export class ItemExponentialFailureRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();
  private readonly baseMs: number;
  private readonly maxMs: number;

  constructor(baseMs: number, maxMs: number) {
    this.baseMs = baseMs;
    this.maxMs = maxMs;
  }

  when(key: string): number {
    const exp = this.failures.get(key) ?? 0;
    this.failures.set(key, exp + 1);
    const backoff = this.baseMs * 2 ** exp;
    return Number.isFinite(backoff) && backoff <= this.maxMs ? backoff : this.maxMs;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/** The controller's default: 5 ms doubling to 1000 s, like client-go's DefaultTypedControllerRateLimiter. */
export function defaultControllerRateLimiter(): RateLimiter {
  return new ItemExponentialFailureRateLimiter(5, 1000 * 1000);
}
