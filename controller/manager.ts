import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { SHARD_LABEL, SHARD_LEASE_LABEL, SHARD_LEASE_PREFIX, STATICSITES, type StaticSiteV1 } from '../api/index.ts';
import { type Clock, sleep } from '../clock/clock.ts';
import type { KubeApi } from '../kube/api-client.ts';
import { errorMessage } from '../kube/api-error.ts';
import { Informer } from '../kube/informer.ts';
import type { LeaseFence } from '../kube/lease-fence.ts';
import type { Gateway, KubeObject, Lease } from '../kube/objects.ts';
import { GATEWAYS, LEASES, type ResourceType } from '../kube/resources.ts';
import { type Check, PING } from '../observability/probes-server.ts';
import type { LogContext } from '../observability/process-logger.ts';
import { ShardMembership } from '../sharding/shard-membership.ts';
import { CHILDREN, type ChildKind, type ChildRegistry, servedKinds } from './child-registry.ts';
import { CLAIM_SELECTOR, HostnameClaims } from './claims/hostname-claims.ts';
import { Controller } from './controller.ts';
import { EventHandlers } from './event-handlers.ts';
import { LeaseElector } from './leader/lease-elector.ts';
import type { EventRecorder } from './observability/events.ts';
import type { Logger } from './observability/logger.ts';
import type { ControllerMetrics } from './observability/metrics.ts';
import { OwnWrites } from './own-writes.ts';
import type { RateLimiter } from './queue/rate-limiter.ts';
import type { WorkQueue } from './queue/work-queue.ts';
import { MANAGED_SELECTOR } from './reconcile/children.ts';
import { type CachedChild, type ReconcilerConfig, SiteReconciler } from './reconcile/reconciler.ts';
import type { GatewayRef } from './reconcile/route.ts';
import type { RecordStore } from './records/record-store.ts';
import { Sharder } from './sharding/sharder.ts';

export const LEASE_NAME = 'staticsite-controller';

export interface LeaderElectionConfig {
  namespace: string;
  name?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

/** `--sharded`: this replica is one shard of the controllers (docs/sharding.md). */
export interface ShardingConfig {
  /** This replica's shard: its Lease is `staticsite-shard-<shard>`, its sites carry it in SHARD_LABEL. */
  shard: string;
  /** Where the shard Leases live: the controller's own namespace. */
  namespace: string;
}

export interface ManagerConfig extends ReconcilerConfig {
  /** Empty: all namespaces. */
  namespace: string;
  /**
   * `--gateway`: each site has an HTTPRoute to this Gateway (a child kind of the registry, whose
   * readiness hook waits for the Gateway to accept it), and the manager watches the Gateway for the
   * addresses the records point at. `served` false: the cluster has no HTTPRoute API (the registry's
   * HTTPRoute entry is unserved, and every site's Ready says so).
   */
  gateway?: { ref: GatewayRef; served: boolean };
  /**
   * `--ingress-class`: each site has an Ingress of this class (a child kind of the registry, whose
   * readiness hook waits for its ingress controller to report an address).
   */
  ingressClass?: string;
  /** Where the hostname claims (Leases) live: the controller's own namespace. */
  claimsNamespace: string;
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
  /**
   * One shard of several: this replica holds its own shard Lease (the lease timings of
   * `leaderElection`, which must be set) and reconciles only its shard's sites; the leader of the
   * leader-election Lease also runs the sharder.
   */
  sharding?: ShardingConfig;
}

export interface ManagerDeps {
  api: KubeApi;
  clock: Clock;
  logger: Logger;
  metrics: ControllerMetrics;
  records: RecordStore;
  events: EventRecorder;
  rateLimiter?: RateLimiter;
  logContext?: LogContext;
  /** The child kinds a site owns: one informer each, watched, ensured. Default: the registry (CHILDREN). */
  children?: ChildRegistry;
  /**
   * With leader election: the fences of the process's writes (docs/controller.md, "Fencing").
   * `work` guards `api`, the events and the record store (the reconciles' writes): it is bound to the
   * leader-election Lease, or with sharding to the shard's own Lease; `leader` guards `leaderApi`
   * (the sharder's writes) and is bound to the leader-election Lease.
   */
  fences?: { work: LeaseFence; leader?: LeaseFence };
  /** The electors' own Lease requests: unfenced (they are what proves leadership). Default: `api`. */
  electionApi?: KubeApi;
  /** With sharding: the sharder's writes, fenced by `fences.leader`. Default: `api`. */
  leaderApi?: KubeApi;
}

/** How a run ended: stopped by the caller, or leadership lost (the process should exit and restart). */
export type RunEnd = 'stopped' | 'leadership-lost';

/** A child kind of the registry with its informer (which is also the cache ensure reads). */
export interface WatchedChild {
  kind: ChildKind;
  informer: Informer<KubeObject>;
}

/**
 * The controller process's manager, after controller-runtime's: it owns the informers (sites, one
 * per child kind of the registry, the hostname claims), leader election, the periodic resync, the
 * liveness and readiness checks and an orderly shutdown, and wires the event handlers (informer
 * events -> queue keys) to the controller (the queue and its workers running the reconciler).
 */
export class ControllerManager {
  readonly identity: string;
  readonly controller: Controller;
  readonly handlers: EventHandlers;
  /** The controller's work queue. */
  readonly queue: WorkQueue;
  readonly sites: Informer<StaticSiteV1>;
  /** The child kinds, in the registry's order, each with its informer. */
  readonly children: readonly WatchedChild[];
  readonly claims: Informer<Lease>;
  /** With --gateway (and the Gateway API served): the one Gateway, for the addresses the records point at. */
  readonly gateway: Informer<Gateway> | undefined;
  readonly elector: LeaseElector | undefined;
  /** --sharded: this replica's own shard Lease (it reconciles while it holds it). */
  readonly shardElector: LeaseElector | undefined;
  /** --sharded: the sharder, run while this replica leads. */
  readonly sharder: Sharder | undefined;
  private readonly deps: ManagerDeps;
  private readonly config: ManagerConfig;
  private fatal: string | undefined;

  constructor(deps: ManagerDeps, config: ManagerConfig) {
    this.deps = deps;
    this.config = config;
    this.identity = config.identity ?? `${hostname()}_${randomUUID()}`;
    const { api, clock, logger, metrics } = deps;
    const sharding = config.sharding;
    if (sharding && !config.leaderElection) {
      throw new Error('sharding needs leader election (the sharder runs on the leader)');
    }
    // A shard watches only its own sites and their children.
    const ownShard = sharding && `${SHARD_LABEL}=${sharding.shard}`;
    this.sites = this.informer<StaticSiteV1>({ type: STATICSITES, labelSelector: ownShard });
    const registry = deps.children ?? CHILDREN;
    this.children = this.childInformers(servedKinds(registry), ownShard);
    this.claims = this.informer<Lease>({
      type: LEASES,
      labelSelector: CLAIM_SELECTOR,
      namespace: config.claimsNamespace,
      name: 'hostname-claims',
    });
    const gateway = config.gateway?.served ? config.gateway.ref : undefined;
    this.gateway =
      gateway &&
      this.informer<Gateway>({
        type: GATEWAYS,
        namespace: gateway.namespace,
        fieldSelector: `metadata.name=${gateway.name}`,
      });
    metrics.watchInformers(() => this.informers().map((i) => i.health()));

    // One record of our own writes: the reconciler adds to it, the event handlers skip their echoes.
    const writes = new OwnWrites();
    const reconciler = new SiteReconciler({
      api,
      sites: this.sites,
      children: this.cachedChildren(registry),
      records: deps.records,
      claims: new HostnameClaims({ api, namespace: config.claimsNamespace, cache: this.claims }),
      gateways: this.gateway,
      events: deps.events,
      clock,
      logger,
      config: { ...config, shard: sharding?.shard },
      writes,
    });
    this.controller = new Controller(
      { reconciler, clock, logger, metrics, rateLimiter: deps.rateLimiter, logContext: deps.logContext },
      { workers: config.workers, shutdownGraceMs: config.shutdownGraceMs },
    );
    this.queue = this.controller.queue;
    this.handlers = new EventHandlers(this.queue, { baseDomain: config.baseDomain, writes });
    this.handlers.register({
      sites: this.sites,
      children: this.children,
      claims: this.claims,
      gateway: this.gateway,
    });
    if (config.excludedNamespaces?.includes(config.namespace)) {
      logger.warn(
        { namespace: config.namespace, excluded: config.excludedNamespaces },
        'the watched namespace is excluded: every StaticSite in it is left alone',
      );
    }
    this.elector =
      config.leaderElection &&
      this.leaseElector({
        ...config.leaderElection,
        fence: sharding ? deps.fences?.leader : deps.fences?.work,
      });
    [this.shardElector, this.sharder] = sharding ? this.shardParts(sharding) : [];
  }

  /** An informer of `type` in the watched namespace (or `namespace`), named after its plural (or `name`). */
  private informer<T extends KubeObject>(what: {
    type: ResourceType;
    labelSelector?: string;
    fieldSelector?: string;
    namespace?: string;
    name?: string;
  }): Informer<T> {
    const { api, clock, logger, metrics } = this.deps;
    return new Informer<T>({
      name: what.name ?? what.type.plural,
      api,
      type: what.type,
      namespace: what.namespace ?? this.config.namespace,
      labelSelector: what.labelSelector,
      fieldSelector: what.fieldSelector,
      clock,
      logger,
      observer: metrics.informerObserver(),
      idleTimeoutMs: this.config.watchIdleTimeoutMs,
    });
  }

  private childInformers(kinds: ChildRegistry, ownShard: string | undefined): WatchedChild[] {
    return kinds.map((kind) => ({
      kind,
      informer: this.informer<KubeObject>({
        type: kind.type,
        labelSelector: ownShard ? `${MANAGED_SELECTOR},${ownShard}` : MANAGED_SELECTOR,
      }),
    }));
  }

  /** Every kind of the registry, in its order, with its informer; an unserved kind, with none, reads nothing. */
  private cachedChildren(registry: ChildRegistry): CachedChild[] {
    const informers = new Map(this.children.map(({ kind, informer }) => [kind, informer]));
    return registry.map((kind) => ({ kind, cache: informers.get(kind) ?? { get: () => undefined } }));
  }

  /** --sharded: this replica's shard Lease, and the sharder it runs while it leads. */
  private shardParts(sharding: ShardingConfig): [LeaseElector, Sharder] {
    const { api, clock, logger, metrics } = this.deps;
    const elector = this.leaseElector({
      ...(this.config.leaderElection as LeaderElectionConfig),
      namespace: sharding.namespace,
      name: `${SHARD_LEASE_PREFIX}${sharding.shard}`,
      labels: { [SHARD_LEASE_LABEL]: sharding.shard },
      fence: this.deps.fences?.work,
    });
    const sharder = new Sharder({
      api: this.deps.leaderApi ?? api,
      clock,
      logger,
      metrics,
      sites: this.informer<StaticSiteV1>({ type: STATICSITES, name: 'sharder-staticsites' }),
      leases: this.informer<Lease>({
        type: LEASES,
        namespace: sharding.namespace,
        labelSelector: SHARD_LEASE_LABEL,
        name: 'shard-leases',
      }),
      membership: new ShardMembership(clock, SHARD_LEASE_LABEL),
    });
    return [elector, sharder];
  }

  private leaseElector(
    le: LeaderElectionConfig & { labels?: Record<string, string>; fence?: LeaseFence },
  ): LeaseElector {
    const { api, electionApi, clock, logger, metrics } = this.deps;
    return new LeaseElector({
      api: electionApi ?? api,
      fence: le.fence,
      clock,
      logger,
      namespace: le.namespace,
      name: le.name ?? LEASE_NAME,
      identity: this.identity,
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
      labels: le.labels,
      onLeaderChange: (leader) => metrics.setLeader(le.name ?? LEASE_NAME, leader),
    });
  }

  informers(): Informer<KubeObject>[] {
    return [
      this.sites,
      ...this.children.map((child) => child.informer),
      this.claims,
      ...(this.gateway ? [this.gateway] : []),
    ] as unknown as Informer<KubeObject>[];
  }

  isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : this.controller.running;
  }

  /** /healthz and /livez: the process and its loops are alive. */
  liveness(): Check[] {
    return [
      PING,
      {
        name: 'controller',
        check: () => (this.fatal === undefined ? { ok: true } : { ok: false, reason: this.fatal }),
      },
    ];
  }

  /** /readyz: every informer has synced and no watch has been down longer than the threshold. */
  readiness(): Check[] {
    return this.informers().map((informer) => ({
      name: `informer-${informer.name}`,
      check: () => {
        const h = informer.health();
        if (!h.synced) return { ok: false, reason: 'not synced' };
        if (h.downForMs > this.config.watchDownThresholdMs) {
          return { ok: false, reason: `watch down for ${Math.round(h.downForMs / 1000)}s` };
        }
        return { ok: true };
      },
    }));
  }

  /** Runs until `stop` aborts (-> 'stopped') or leadership is lost (-> 'leadership-lost'). */
  async run(stop: AbortSignal): Promise<RunEnd> {
    const { logger } = this.deps;
    for (const informer of this.informers()) informer.start();
    let end: RunEnd = 'stopped';
    try {
      if (this.shardElector && this.sharder && this.elector) {
        end = await this.runShard(stop, this.shardElector, this.elector, this.sharder);
      } else if (this.elector) {
        const outcome = await this.elector.run(stop, (leading) => this.lead(leading));
        if (outcome === 'lost') end = 'leadership-lost';
      } else {
        await this.lead(stop);
      }
    } catch (error) {
      this.fatal = errorMessage(error);
      throw error;
    } finally {
      this.controller.shutDown();
      await Promise.all(this.informers().map((i) => i.stop()));
      logger.info({ end }, 'controller stopped');
    }
    return end;
  }

  /**
   * A shard: reconciles its sites while it holds its shard Lease and, while it also holds the
   * leader-election Lease, runs the sharder. Losing either Lease ends both (the process restarts).
   */
  private async runShard(
    stop: AbortSignal,
    shard: LeaseElector,
    leader: LeaseElector,
    sharder: Sharder,
  ): Promise<RunEnd> {
    const both = new AbortController();
    const stopBoth = () => both.abort();
    stop.addEventListener('abort', stopBoth, { once: true });
    const ended = (outcome: 'lost' | 'stopped') => {
      both.abort();
      return outcome;
    };
    try {
      const outcomes = await Promise.all([
        shard.run(both.signal, (active) => this.lead(active)).then(ended),
        leader.run(both.signal, (active) => sharder.run(active)).then(ended),
      ]);
      return outcomes.includes('lost') ? 'leadership-lost' : 'stopped';
    } finally {
      stop.removeEventListener('abort', stopBoth);
    }
  }

  /**
   * While `active` is not aborted (this replica leads): waits for the caches, queues every site,
   * runs the controller's workers and the periodic resync. See Controller.run for how an abort
   * ends the workers.
   */
  private async lead(active: AbortSignal): Promise<void> {
    await Promise.race([
      Promise.all(this.informers().map((i) => i.waitForSync())),
      new Promise<void>((resolve) => active.addEventListener('abort', () => resolve(), { once: true })),
    ]);
    if (active.aborted) return;
    this.deps.logger.info({ workers: this.config.workers, identity: this.identity }, 'caches synced; starting workers');
    this.enqueueAllSites();
    const resync = this.config.resyncPeriodMs > 0 ? this.resyncLoop(active) : Promise.resolve();
    await this.controller.run(active);
    await resync;
  }

  private enqueueAllSites(): void {
    for (const key of this.sites.keys()) this.queue.add(key);
  }

  private async resyncLoop(active: AbortSignal): Promise<void> {
    while (!active.aborted) {
      await sleep(this.deps.clock, this.config.resyncPeriodMs, active);
      if (active.aborted) return;
      this.enqueueAllSites();
    }
  }
}
