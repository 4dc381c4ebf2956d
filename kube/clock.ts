/** Time as the controller sees it: injected so tests drive timers and backoff without waiting. */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export interface TimerHandle {
  readonly id: number;
}

/** The wall clock and Node's timers; timers are unref'd so they never hold the process open. */
export class SystemClock implements Clock {
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private next = 1;

  now(): number {
    return Date.now();
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const id = this.next++;
    const timer = setTimeout(
      () => {
        this.timers.delete(id);
        callback();
      },
      Math.max(0, ms),
    );
    timer.unref();
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
