import type { Clock, TimerHandle } from '../../../clock/clock.ts';
import { settle } from './settle.ts';

interface Timer {
  id: number;
  at: number;
  seq: number;
  callback: () => void;
}

/** A start time as epoch milliseconds, a Date or an ISO string. */
export type Instant = number | Date | string;

function toMs(instant: Instant): number {
  return typeof instant === 'number' ? instant : new Date(instant).getTime();
}

/** A clock that only moves when told to: `advance` fires the timers that fall due, in order. */
export class ManualClock implements Clock {
  private current: number;
  /** Moves with `advance`, never with `set`: a wall-clock step leaves monotonic time alone. */
  private elapsed = 0;
  protected readonly timers = new Map<number, Timer>();
  private next = 1;
  private seq = 0;

  constructor(start: Instant = Date.parse('2026-11-29T12:00:00Z')) {
    this.current = toMs(start);
  }

  now(): number {
    return this.current;
  }

  monotonic(): number {
    return this.elapsed;
  }

  /** Jumps to `to` without firing any timer: for code that only reads the time. */
  set(to: Instant): void {
    this.current = toMs(to);
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const id = this.next++;
    this.timers.set(id, { id, at: this.current + Math.max(0, ms), seq: this.seq++, callback });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle.id);
  }

  /**
   * Moves time forward by `ms` without firing a timer: what a stopped process (SIGSTOP, a long GC
   * pause, a frozen VM) finds when it runs again. The overdue timers fire on the next `advance`.
   */
  stall(ms: number): void {
    this.moveTo(this.current + ms);
  }

  private moveTo(to: number): void {
    this.elapsed += to - this.current;
    this.current = to;
  }

  pending(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing due timers in order and letting promises settle after each. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await settle();
      const due = [...this.timers.values()]
        .filter((t) => t.at <= target)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers.delete(due.id);
      this.moveTo(Math.max(this.current, due.at));
      due.callback();
    }
    this.moveTo(target);
    await settle();
  }
}

/**
 * A ManualClock that moves by itself: each timer, unless cleared first, fires a turn of the event
 * loop after it is set, with time jumped forward to its due time, so a loop of sleeps runs at once.
 * Every delay asked for is recorded in `delays`; `onTimer` (awaited before the timer fires) lets a
 * test act while the code under test sleeps, or abort it.
 */
export class AutoAdvancingClock extends ManualClock {
  readonly delays: number[] = [];
  private readonly onTimer: ((ms: number) => void | Promise<void>) | undefined;

  constructor(start?: Instant, onTimer?: (ms: number) => void | Promise<void>) {
    super(start);
    this.onTimer = onTimer;
  }

  override setTimeout(callback: () => void, ms: number): TimerHandle {
    const handle = super.setTimeout(callback, ms);
    this.delays.push(ms);
    void this.fireLater(handle, ms);
    return handle;
  }

  private async fireLater(handle: TimerHandle, ms: number): Promise<void> {
    await Promise.resolve(); // the caller of setTimeout finishes first (sleep() listens for its abort)
    await this.onTimer?.(ms);
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.timers.has(handle.id)) await this.advance(ms);
  }
}
