import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock/clock.ts';
import { errorMessage } from '../kube/api-error.ts';
import type { LogContext } from '../observability/process-logger.ts';
import type { Logger } from './observability/logger.ts';
import type { ControllerMetrics } from './observability/metrics.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './queue/rate-limiter.ts';
import { WorkQueue } from './queue/work-queue.ts';
import type { ReconcileResult } from './reconcile/reconciler.ts';

/**
 * Converges one key. Resolves with what it asks of the queue (nothing, or a requeue after a
 * delay); throws to have the key retried with the queue's per-key backoff.
 */
export interface Reconciler {
  reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult>;
}

export interface ControllerDeps {
  reconciler: Reconciler;
  clock: Clock;
  logger: Logger;
  metrics: Pick<ControllerMetrics, 'queueObserver' | 'reconciled' | 'setWorkers'>;
  rateLimiter?: RateLimiter;
  /** Each reconcile runs in this context with controller-runtime's fields: its log lines carry them. */
  logContext?: LogContext;
}

export interface ControllerOptions {
  workers: number;
  /** How long an in-flight reconcile may finish after the workers are told to stop. */
  shutdownGraceMs: number;
}

/**
 * The controller proper, as controller-runtime's: a rate-limited work queue and N workers that take
 * keys from it and call the reconciler. The queue owns retries: a failure re-queues the key after
 * its backoff, a success forgets the key's failures, and a requested requeue waits its delay.
 * What fills the queue (event handlers) and when the workers run (caches, leadership) is the
 * manager's business.
 */
export class Controller {
  readonly queue: WorkQueue;
  private readonly deps: ControllerDeps;
  private readonly options: ControllerOptions;
  private workersRunning = false;

  constructor(deps: ControllerDeps, options: ControllerOptions) {
    this.deps = deps;
    this.options = options;
    this.queue = new WorkQueue(
      deps.clock,
      deps.rateLimiter ?? defaultControllerRateLimiter(),
      deps.metrics.queueObserver(() => deps.clock.now()),
    );
    deps.metrics.setWorkers(options.workers);
  }

  /** True while the workers run. */
  get running(): boolean {
    return this.workersRunning;
  }

  /**
   * Runs the workers until `active` aborts and resolves once they have stopped. When it aborts, no
   * new key is handed out; an in-flight reconcile may finish within the shutdown grace period,
   * except after a lost lease (abort reason 'lost'), when its requests are cancelled at once.
   */
  async run(active: AbortSignal): Promise<void> {
    const { clock } = this.deps;
    const hard = new AbortController();
    const onAbort = () => {
      this.queue.shutDown();
      if (active.reason === 'lost') hard.abort();
      else clock.setTimeout(() => hard.abort(), this.options.shutdownGraceMs);
    };
    if (active.aborted) return;
    active.addEventListener('abort', onAbort, { once: true });
    this.workersRunning = true;
    const loops = Array.from({ length: Math.max(1, this.options.workers) }, () => this.worker(hard.signal));
    await Promise.all(loops);
    await this.queue.drain();
    this.workersRunning = false;
    hard.abort();
  }

  /** Stops handing out keys for good (pending and future adds are dropped). */
  shutDown(): void {
    this.queue.shutDown();
  }

  /** controller-runtime's reconcile log fields: controller, namespace, name and a fresh reconcileID. */
  private inContext<T>(key: string, run: () => Promise<T>): Promise<T> {
    const context = this.deps.logContext;
    if (!context) return run();
    const slash = key.indexOf('/');
    const [namespace, name] = slash < 0 ? ['', key] : [key.slice(0, slash), key.slice(slash + 1)];
    return context.run({ controller: 'staticsite', namespace, name, reconcileID: randomUUID() }, run);
  }

  private async worker(active: AbortSignal): Promise<void> {
    const { clock, logger, metrics, reconciler } = this.deps;
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const started = clock.now();
      try {
        const result = await this.inContext(key, () => reconciler.reconcile(key, active));
        this.queue.forget(key);
        if (result.requeueAfterMs !== undefined) {
          this.queue.addAfter(key, result.requeueAfterMs);
          metrics.reconciled('requeue_after', (clock.now() - started) / 1000);
        } else {
          metrics.reconciled('success', (clock.now() - started) / 1000);
        }
      } catch (error) {
        metrics.reconciled('error', (clock.now() - started) / 1000);
        if (!active.aborted) {
          const delay = this.queue.addRateLimited(key);
          logger.warn({ site: key, err: errorMessage(error), retryInMs: delay }, 'reconcile failed; will retry');
        }
      } finally {
        this.queue.done(key);
      }
    }
  }
}
