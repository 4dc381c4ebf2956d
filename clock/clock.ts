/** Time as the operator's components see it: injected so tests drive timers and backoff without waiting. */
export interface Clock {
  /** Wall-clock time, epoch milliseconds: for timestamps written to objects. */
  now(): number;
  /**
   * Milliseconds on a monotonic clock (any origin): for measuring how long ago something happened,
   * immune to wall-clock steps (NTP, an operator's `date -s`). It keeps running while the process is
   * stopped (SIGSTOP), which is what a lease's deadline must count.
   */
  monotonic(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export interface TimerHandle {
  readonly id: number;
}

/** Node fires a longer timeout at once (with a warning); a longer wait is cut to this. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export interface SystemClockOptions {
  /**
   * Unref each timer, so a pending timer never holds the process open (the default). A process
   * whose only pending work may be a sleep (the cert bootstrapper's --watch loop) sets this false.
   */
  unrefTimers?: boolean;
}

/** The wall clock and Node's timers; by default timers are unref'd so they never hold the process open. */
export class SystemClock implements Clock {
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly unrefTimers: boolean;
  private next = 1;

  constructor(options: SystemClockOptions = {}) {
    this.unrefTimers = options.unrefTimers ?? true;
  }

  now(): number {
    return Date.now();
  }

  monotonic(): number {
    return performance.now();
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const id = this.next++;
    const timer = setTimeout(
      () => {
        this.timers.delete(id);
        callback();
      },
      Math.min(Math.max(0, ms), MAX_TIMEOUT_MS),
    );
    if (this.unrefTimers) timer.unref();
    this.timers.set(id, timer);
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    const timer = this.timers.get(handle.id);
    if (timer) clearTimeout(timer);
    this.timers.delete(handle.id);
  }
}

/** Resolves after `ms` on `clock`, or early (without throwing) when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      clock.clearTimeout(handle);
      resolve();
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** metav1.Time: RFC 3339 with second precision, as the API server writes it. */
export function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** metav1.MicroTime: RFC 3339 with six fractional digits (Lease renewTime/acquireTime). */
export function formatMicroTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 23)}000Z`;
}
