import type { Logger } from 'pino';
import { type Clock, sleep } from '../clock/clock.ts';
import type { BootstrapResult } from './bootstrap.ts';
import { DEFAULT_CHECK_INTERVAL_MS } from './config.ts';
import { isCertsError } from './errors.ts';

export interface WatchOptions {
  /** Reads the time and sleeps between passes. */
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Stops the loop (after the current pass). */
  signal: AbortSignal;
  /** Re-check at least this often. Default 10 min. */
  checkIntervalMs?: number;
  /** Never wait less than this between passes, and the first retry delay after a failure. Default 10 s. */
  minDelayMs?: number;
  /** Retry delays double from minDelayMs up to this. Default 5 min (never more than checkIntervalMs). */
  maxRetryDelayMs?: number;
  /** Called after each pass with its outcome. */
  onPass?: (outcome: { result?: BootstrapResult; error?: unknown; delayMs: number }) => void;
}

/**
 * `--watch`: runs `pass` now, then again at the next due time (a renewal threshold or the end of a CA
 * overlap) or after checkIntervalMs, whichever is sooner. A failed pass is retried with doubling
 * delays; the loop itself never dies from an error. Resolves when `signal` aborts.
 */
export async function watch(pass: () => Promise<BootstrapResult>, options: WatchOptions): Promise<void> {
  const interval = options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS;
  const minDelay = options.minDelayMs ?? 10_000;
  const maxRetry = Math.min(options.maxRetryDelayMs ?? 5 * 60_000, interval);
  let failures = 0;
  while (!options.signal.aborted) {
    let delayMs: number;
    try {
      const result = await pass();
      failures = 0;
      const untilDue = result.nextDue.getTime() - options.clock.now();
      delayMs = Math.max(minDelay, Math.min(interval, untilDue));
      options.onPass?.({ result, delayMs });
    } catch (error) {
      failures++;
      delayMs = Math.min(maxRetry, minDelay * 2 ** (failures - 1));
      options.logger.error(
        {
          event: 'bootstrap-failed',
          code: isCertsError(error) ? error.code : undefined,
          err: error instanceof Error ? error.message : String(error),
          failures,
          retryInMs: delayMs,
        },
        'bootstrap failed; retrying',
      );
      options.onPass?.({ error, delayMs });
    }
    if (options.signal.aborted) break;
    await sleep(options.clock, delayMs, options.signal);
  }
  options.logger.info({ event: 'watch-stopped' }, 'stopped watching certificates');
}
