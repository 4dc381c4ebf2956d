import { type Clock, sleep } from '../clock/clock.ts';
import type { RequestThrottle } from './transport.ts';

/** client-go's token bucket: `qps` tokens a second, at most `burst` saved up; waiters are served in order. */
export class TokenBucket implements RequestThrottle {
  private readonly clock: Clock;
  private readonly qps: number;
  private readonly burst: number;
  private tokens: number;
  private last: number;
  private tail: Promise<void> = Promise.resolve();

  constructor(clock: Clock, qps: number, burst: number) {
    this.clock = clock;
    this.qps = qps;
    this.burst = Math.max(1, burst);
    this.tokens = this.burst;
    this.last = clock.monotonic();
  }

  acquire(signal?: AbortSignal): Promise<void> {
    const turn = this.tail.then(() => this.take(signal));
    this.tail = turn.catch(() => {});
    return turn;
  }

  private async take(signal?: AbortSignal): Promise<void> {
    if (this.qps <= 0) return;
    this.refill();
    if (this.tokens < 1) {
      await sleep(this.clock, ((1 - this.tokens) / this.qps) * 1000, signal);
      this.refill();
    }
    this.tokens -= 1;
  }

  private refill(): void {
    const now = this.clock.monotonic();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
  }
}
