import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { StaticSiteV1 } from '../api/index.ts';
import type { KubeApi } from '../kube/api-client.ts';
import { errorMessage } from '../kube/api-error.ts';
import { type Clock, sleep } from '../kube/clock.ts';
import { type ChangeType, Informer } from '../kube/informer.ts';
import { type ConfigMap, type Deployment, type KubeObject, objectKey, type Service } from '../kube/objects.ts';
import { CONFIGMAPS, DEPLOYMENTS, type ResourceType, SERVICES, STATICSITES } from '../kube/resources.ts';
import { EchoFilter } from './echo-filter.ts';
import { LeaseElector } from './leader/lease-elector.ts';
import type { EventRecorder } from './observability/events.ts';
import type { Check } from './observability/health-server.ts';
import type { Logger } from './observability/logger.ts';
import type { ControllerMetrics } from './observability/metrics.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './queue/rate-limiter.ts';
import { WorkQueue } from './queue/work-queue.ts';
import { INSTANCE_LABEL, MANAGED_SELECTOR } from './reconcile/children.ts';
import { ownerKey } from './reconcile/ownership.ts';
import { type ReconcilerConfig, SiteReconciler } from './reconcile/reconciler.ts';
import type { RecordStore } from './records/record-store.ts';

export const LEASE_NAME = 'staticsite-controller';

export interface LeaderElectionConfig {
  namespace: string;
  name?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface ManagerConfig extends ReconcilerConfig {
  /** Empty: all namespaces. */
  namespace: string;
  workers: number;
  /** Every site is reconciled again this often even without events (0: never). */
  resyncPeriodMs: number;
  /** /readyz fails when a watch has been down longer than this. */
  watchDownThresholdMs: number;
  /** A watch with no event or bookmark for this long is restarted. */
  watchIdleTimeoutMs?: number;
  /** How long shutdown waits for in-flight reconciles. */
  shutdownGraceMs: number;
  leaderElection?: LeaderElectionConfig;
  identity?: string;
}

export interface ManagerDeps {
  api: KubeApi;
  clock: Clock;
  logger: Logger;
  metrics: ControllerMetrics;
  records: RecordStore;
  events: EventRecorder;
  rateLimiter?: RateLimiter;
}

/** How a run ended: stopped by the caller, or leadership lost (the process should exit and restart). */
export type RunEnd = 'stopped' | 'leadership-lost';

/**
 * Wires the StaticSite controller: informers for sites and for the labelled children (a child event
 * enqueues its owner), the work queue and N workers running the reconciler, periodic resync,
 * leader election, readiness, and an orderly shutdown.
 */
export class ControllerManager {
  readonly identity: string;
  readonly queue: WorkQueue;
  readonly sites: Informer<StaticSiteV1>;
  readonly configMaps: Informer<ConfigMap>;
  readonly deployments: Informer<Deployment>;
  readonly services: Informer<Service>;
  readonly elector: LeaseElector | undefined;
  private readonly deps: ManagerDeps;
  private readonly config: ManagerConfig;
  private readonly reconciler: SiteReconciler;
  private readonly echoes = new EchoFilter();
  private workersRunning = false;
  private fatal: string | undefined;

  constructor(deps: ManagerDeps, config: ManagerConfig) {
    this.deps = deps;
    this.config = config;
    this.identity = config.identity ?? `${hostname()}_${randomUUID()}`;
    const { api, clock, logger, metrics } = deps;
    this.queue = new WorkQueue(clock, deps.rateLimiter ?? defaultControllerRateLimiter(), metrics.queueObserver());
    const informer = <T extends KubeObject>(type: ResourceType, labelSelector?: string) =>
      new Informer<T>({
        name: type.plural,
        api,
        type,
        namespace: config.namespace,
        labelSelector,
        clock,
        logger,
        observer: metrics.informerObserver(),
        idleTimeoutMs: config.watchIdleTimeoutMs,
      });
    this.sites = informer<StaticSiteV1>(STATICSITES);
    this.configMaps = informer<ConfigMap>(CONFIGMAPS, MANAGED_SELECTOR);
    this.deployments = informer<Deployment>(DEPLOYMENTS, MANAGED_SELECTOR);
    this.services = informer<Service>(SERVICES, MANAGED_SELECTOR);
    metrics.watchInformers(() => this.informers().map((i) => i.health()));

    this.sites.onChange((type, site) => this.onSiteChange(type, site));
    this.configMaps.onChange((type, object) => this.onChildChange('ConfigMap', type, object));
    this.deployments.onChange((type, object) => this.onChildChange('Deployment', type, object));
    this.services.onChange((type, object) => this.onChildChange('Service', type, object));

    this.reconciler = new SiteReconciler({
      api,
      caches: { configMaps: this.configMaps, deployments: this.deployments, services: this.services },
      records: deps.records,
      events: deps.events,
      clock,
      logger,
      config,
      wrote: (kind, object) => this.echoes.wrote(kind, object),
    });

    if (config.leaderElection) {
      const le = config.leaderElection;
      this.elector = new LeaseElector({
        api,
        clock,
        logger,
        namespace: le.namespace,
        name: le.name ?? LEASE_NAME,
        identity: this.identity,
        leaseDurationMs: le.leaseDurationMs,
        renewDeadlineMs: le.renewDeadlineMs,
        retryPeriodMs: le.retryPeriodMs,
        onLeaderChange: (leader) => metrics.setLeader(le.name ?? LEASE_NAME, leader),
      });
    }
  }

  informers(): Informer<KubeObject>[] {
    return [this.sites, this.configMaps, this.deployments, this.services] as unknown as Informer<KubeObject>[];
  }

  isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : this.workersRunning;
  }

  /** /healthz: the process and its loops are alive. */
  liveness(): Check {
    return this.fatal
      ? { ok: false, lines: [`[-]controller failed: ${this.fatal}`] }
      : { ok: true, lines: ['[+]ping ok'] };
  }

  /** /readyz: every informer has synced and no watch has been down longer than the threshold. */
  readiness(): Check {
    let ok = true;
    const lines: string[] = [];
    for (const h of this.informers().map((i) => i.health())) {
      if (!h.synced) {
        ok = false;
        lines.push(`[-]informer-${h.name} failed: not synced`);
      } else if (h.downForMs > this.config.watchDownThresholdMs) {
        ok = false;
        lines.push(`[-]informer-${h.name} failed: watch down for ${Math.round(h.downForMs / 1000)}s`);
      } else {
        lines.push(`[+]informer-${h.name} ok`);
      }
    }
    return { ok, lines };
  }

  private onSiteChange(type: ChangeType, site: StaticSiteV1): void {
    if (type === 'delete') {
      this.echoes.forget('StaticSite', site);
    } else if (this.echoes.isEcho('StaticSite', site)) {
      return;
    }
    this.queue.add(objectKey(site));
  }

  private onChildChange(kind: string, type: ChangeType, object: KubeObject): void {
    if (type === 'delete') this.echoes.forget(kind, object);
    else if (this.echoes.isEcho(kind, object)) return;
    const key =
      ownerKey(object) ??
      (object.metadata.labels?.[INSTANCE_LABEL] && object.metadata.namespace
        ? `${object.metadata.namespace}/${object.metadata.labels[INSTANCE_LABEL]}`
        : undefined);
    if (key) this.queue.add(key);
  }

  /** Runs until `stop` aborts (-> 'stopped') or leadership is lost (-> 'leadership-lost'). */
  async run(stop: AbortSignal): Promise<RunEnd> {
    const { logger } = this.deps;
    for (const informer of this.informers()) informer.start();
    let end: RunEnd = 'stopped';
    try {
      if (this.elector) {
        const outcome = await this.elector.run(stop, (leading) => this.runWorkers(leading));
        if (outcome === 'lost') end = 'leadership-lost';
      } else {
        await this.runWorkers(stop);
      }
    } catch (error) {
      this.fatal = errorMessage(error);
      throw error;
    } finally {
      this.queue.shutDown();
      await Promise.all(this.informers().map((i) => i.stop()));
      logger.info({ end }, 'controller stopped');
    }
    return end;
  }

  /**
   * Workers take keys while `active` is not aborted. When it aborts, no new key is handed out; an
   * in-flight reconcile may finish within the shutdown grace period, except after a lost lease
   * (abort reason 'lost'), when its requests are cancelled at once.
   */
  private async runWorkers(active: AbortSignal): Promise<void> {
    const { clock, logger } = this.deps;
    const hard = new AbortController();
    const onAbort = () => {
      this.queue.shutDown();
      if (active.reason === 'lost') hard.abort();
      else clock.setTimeout(() => hard.abort(), this.config.shutdownGraceMs);
    };
    await Promise.race([
      Promise.all(this.informers().map((i) => i.waitForSync())),
      new Promise<void>((resolve) => active.addEventListener('abort', () => resolve(), { once: true })),
    ]);
    if (active.aborted) return;
    active.addEventListener('abort', onAbort, { once: true });
    this.workersRunning = true;
    logger.info({ workers: this.config.workers, identity: this.identity }, 'caches synced; starting workers');
    for (const key of this.sites.keys()) this.queue.add(key);
    const resync = this.config.resyncPeriodMs > 0 ? this.resyncLoop(active) : Promise.resolve();
    const loops = Array.from({ length: Math.max(1, this.config.workers) }, () => this.worker(hard.signal));
    await Promise.all(loops);
    await this.queue.drain();
    await resync;
    this.workersRunning = false;
    hard.abort();
  }

  private async resyncLoop(active: AbortSignal): Promise<void> {
    while (!active.aborted) {
      await sleep(this.deps.clock, this.config.resyncPeriodMs, active);
      if (active.aborted) return;
      for (const key of this.sites.keys()) this.queue.add(key);
    }
  }

  private async worker(active: AbortSignal): Promise<void> {
    const { clock, logger, metrics } = this.deps;
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const started = clock.now();
      try {
        const result = await this.reconciler.reconcile(key, active);
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
