/**
 * A burst of work (a thousand sites created at once, the first list of a restart) grows V8's young
 * generation from 16 to 64 MiB or more, and the process keeps that capacity and the old space's freed
 * pages once the burst is over: at 1,000 sites they were half of the settled controller's RSS above
 * idle (bench/RESULTS.md, "Where the controller's memory sits"). Once the work has gone quiet after a
 * burst, one memory-reducing collection gives them back; the next burst grows them again.
 */
import type { Clock, TimerHandle } from '../clock/clock.ts';

export interface MemoryReclaimOptions {
  clock: Clock;
  /** Work items (reconciles) done so far: a count that only grows. */
  workDone: () => number;
  /** The memory-reducing collection (memory-reducing-gc.ts). */
  reclaim: () => void;
  /** How often the work is looked at. */
  periodMs?: number;
  /** Work since the last reclaim that makes a burst. */
  burst?: number;
  /** Work within one period that still counts as quiet (resyncs and status changes trickle on). */
  quiet?: number;
  /** After each reclaim, with what it took. */
  reclaimed?: (info: { ms: number; work: number }) => void;
}

/** Defaults: a settled controller reconciles a few sites a second at most (a 10-minute resync of 10,000). */
export const MEMORY_RECLAIM = { periodMs: 15_000, burst: 500, quiet: 50 } as const;

export class MemoryReclaimer {
  private readonly options: Required<Omit<MemoryReclaimOptions, 'reclaimed'>> & Pick<MemoryReclaimOptions, 'reclaimed'>;
  private timer: TimerHandle | undefined;
  private lastSeen = 0;
  private reclaimedAt = 0;

  constructor(options: MemoryReclaimOptions) {
    this.options = { ...MEMORY_RECLAIM, ...options };
  }

  start(): void {
    this.lastSeen = this.options.workDone();
    this.schedule();
  }

  stop(): void {
    if (this.timer) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.timer = this.options.clock.setTimeout(() => this.look(), this.options.periodMs);
  }

  private look(): void {
    const { workDone, reclaim, clock, burst, quiet } = this.options;
    const work = workDone();
    const quietNow = work - this.lastSeen <= quiet;
    this.lastSeen = work;
    if (quietNow && work - this.reclaimedAt >= burst) {
      const started = clock.monotonic();
      reclaim();
      this.reclaimedAt = work;
      this.options.reclaimed?.({ ms: clock.monotonic() - started, work });
    }
    this.schedule();
  }
}
