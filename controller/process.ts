import { DEFAULT_NAMESPACE, SHARD_LEASE_PREFIX } from '../api/index.ts';
import { SystemClock } from '../clock/clock.ts';
import { KubeApi } from '../kube/api-client.ts';
import type { ClusterConfig } from '../kube/cluster.ts';
import { loadClusterConfig } from '../kube/cluster-config.ts';
import { LeaseFence } from '../kube/lease-fence.ts';
import { HTTPROUTES } from '../kube/resources.ts';
import { TokenBucket } from '../kube/token-bucket.ts';
import { HttpsTransport } from '../kube/transport.ts';
import {
  type MetricsSecurity,
  type ObservabilityAddresses,
  startObservabilityServers,
} from '../observability/probes-server.ts';
import type { LogContext } from '../observability/process-logger.ts';
import { childRegistry } from './child-registry.ts';
import { ControllerManager, LEASE_NAME, type ManagerConfig, type ManagerDeps, type RunEnd } from './manager.ts';
import { MemoryReclaimer } from './memory-reclaim.ts';
import { memoryReducingGc } from './memory-reducing-gc.ts';
import { ApiEventRecorder } from './observability/events.ts';
import type { Logger } from './observability/logger.ts';
import { ControllerMetrics } from './observability/metrics.ts';
import type { GatewayRef } from './reconcile/route.ts';
import { createRecordStore, type RecordsConfig } from './records/records-config.ts';
import { checkStartupNeeds, isServed, retryUnreachable } from './startup-checks.ts';

export interface ControllerProcessOptions {
  kubeconfig?: string;
  namespace: string;
  /** Where the hostname claims live. Default: the leader-election Lease's namespace. */
  claimsNamespace?: string;
  /** Create the claims namespace when it is missing (a developer's cluster), instead of failing. */
  createClaimsNamespace?: boolean;
  /** StaticSites in these namespaces are left alone. */
  excludeNamespaces: readonly string[];
  records: RecordsConfig;
  workers: number;
  leaderElect: boolean;
  leaderElectNamespace?: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Where /metrics (with the probes) and, optionally, the probes alone are served. */
  observability: ObservabilityAddresses;
  /** Secure metrics (HTTPS, TokenReview + SubjectAccessReview through the controller's API); none: plain HTTP. */
  metricsSecurity?: (api: KubeApi) => MetricsSecurity;
  baseDomain: string;
  /** The site container's image and the port it serves on. */
  image: string;
  sitePort: number;
  resyncPeriodMs: number;
  qps: number;
  burst: number;
  shutdownGraceMs: number;
  watchDownThresholdMs: number;
  identity?: string;
  /** `--gateway` (and `--gateway-section`): an HTTPRoute per site to this Gateway. */
  gateway?: GatewayRef;
  /** `--ingress-class`: an Ingress per site, of this class. */
  ingressClass?: string;
  /** `--sharded` (with `--shard-name`): this replica is this shard of the controllers; implies leader election. */
  shard?: string;
}

export interface RunningController {
  manager: ControllerManager;
  metricsPort?: number;
  probePort?: number;
  /** Resolves when the controller has stopped and everything is closed. */
  done: Promise<RunEnd>;
  stop(): void;
}

/** The manager's configuration from the process options; `ownNamespace` holds the Lease and, by default, the claims. */
function managerConfig(options: ControllerProcessOptions, ownNamespace: string): ManagerConfig {
  return {
    namespace: options.namespace,
    claimsNamespace: options.claimsNamespace ?? ownNamespace,
    excludedNamespaces: options.excludeNamespaces,
    workers: options.workers,
    resyncPeriodMs: options.resyncPeriodMs,
    watchDownThresholdMs: options.watchDownThresholdMs,
    shutdownGraceMs: options.shutdownGraceMs,
    baseDomain: options.baseDomain,
    ingressClass: options.ingressClass,
    image: options.image,
    port: options.sitePort,
    identity: options.identity,
    sharding: options.shard === undefined ? undefined : { shard: options.shard, namespace: ownNamespace },
    leaderElection:
      options.leaderElect || options.shard !== undefined
        ? {
            namespace: ownNamespace,
            leaseDurationMs: options.leaseDurationMs,
            renewDeadlineMs: options.renewDeadlineMs,
            retryPeriodMs: options.retryPeriodMs,
          }
        : undefined,
  };
}

/** What the API connections share: the cluster, the clock, the client-side throttle's settings and the metrics. */
interface Connection {
  cluster: ClusterConfig;
  clock: SystemClock;
  options: ControllerProcessOptions;
  metrics: ControllerMetrics;
}

interface Pool {
  maxSockets?: number;
  /** Every request but a GET asks this first (kube/lease-fence.ts). */
  fence?: LeaseFence;
  requestTimeoutMs?: number;
}

function connect({ cluster, clock, options, metrics }: Connection, pool: Pool = {}): Promise<HttpsTransport> {
  return HttpsTransport.connect(cluster, {
    clock,
    throttle: new TokenBucket(clock, options.qps, options.burst),
    observe: (info) => metrics.observeRequest(info),
    ...pool,
  });
}

/**
 * With leader election, the fences of the process's writes: `work` for the reconciles (bound to the
 * leader-election Lease, or with --sharded to the shard's own Lease), `leader` for the sharder.
 */
function writeFences(config: ManagerConfig, clock: SystemClock): ManagerDeps['fences'] {
  const election = config.leaderElection;
  if (!election) return undefined;
  const renewDeadlineMs = election.renewDeadlineMs ?? 10_000;
  const fence = (lease: string) => new LeaseFence({ lease, clock, renewDeadlineMs });
  const leader = fence(`${election.namespace}/${election.name ?? LEASE_NAME}`);
  if (!config.sharding) return { work: leader };
  return { work: fence(`${config.sharding.namespace}/${SHARD_LEASE_PREFIX}${config.sharding.shard}`), leader };
}

/**
 * Start-up dependencies before anything serves /readyz: a missing one fails the start with its fix,
 * rather than a controller that reports ready and fails every reconcile.
 */
function checkStartup(api: KubeApi, options: ControllerProcessOptions, config: ManagerConfig, logger: Logger) {
  return retryUnreachable(
    () =>
      checkStartupNeeds(api, {
        namespace: options.namespace,
        claimsNamespace: config.claimsNamespace,
        leaderElectionNamespace: config.leaderElection?.namespace,
        createClaimsNamespace: options.createClaimsNamespace ?? false,
        secureMetrics: options.metricsSecurity !== undefined,
        children: childRegistry(config.gateway, config.baseDomain, config.ingressClass),
        gatewayNamespace: config.gateway?.served ? config.gateway.ref.namespace : undefined,
        shardLease: config.sharding && {
          namespace: config.sharding.namespace,
          name: `${SHARD_LEASE_PREFIX}${config.sharding.shard}`,
        },
      }),
    // Its own clock with ref'd timers: while it waits for the API server nothing else holds the process open.
    { clock: new SystemClock({ unrefTimers: false }), logger },
  );
}

/**
 * `--gateway`: whether the cluster serves the Gateway API's HTTPRoute. Without it the controller still
 * starts (the sites' Ready says why none is reachable by name) and logs the fix.
 */
async function gatewayConfig(api: KubeApi, gateway: GatewayRef | undefined, logger: Logger) {
  if (!gateway) return undefined;
  const clock = new SystemClock({ unrefTimers: false });
  const served = await retryUnreachable(() => isServed(api, HTTPROUTES), { clock, logger });
  if (!served) {
    logger.error(
      { gateway },
      `--gateway is set and the cluster serves no ${HTTPROUTES.kind} (${HTTPROUTES.group}/${HTTPROUTES.version}): no routes; every site reports Ready=False (GatewayAPIMissing) until the Gateway API CRDs are installed and the controller restarted`,
    );
  }
  return { ref: gateway, served };
}

/** The process's API clients, each over a connection pool of its own; `close` ends them all. */
interface ProcessApis {
  /**
   * Unfenced: the Lease requests that prove leadership, the start-up checks and the metrics
   * server's reviews (TokenReview, SubjectAccessReview: POSTs that store nothing).
   */
  unfenced: KubeApi;
  /** The reconciles' reads and writes, fenced by `fences.work`. */
  work: KubeApi;
  /**
   * Events, fenced like the reconciles, with their own pool and throttle (as controller-runtime's
   * recorder gets its own client): an error storm's events never starve the reconciles, nor the reverse.
   */
  events: KubeApi;
  /** With --sharded: the sharder's writes, fenced by the leader-election Lease. */
  leader: KubeApi | undefined;
  close(): void;
}

async function connectApis(connection: Connection, fences: ManagerDeps['fences']): Promise<ProcessApis> {
  const { renewDeadlineMs } = connection.options;
  const pools = {
    unfenced: await connect(connection, { maxSockets: 4, requestTimeoutMs: renewDeadlineMs }),
    work: await connect(connection, { fence: fences?.work }),
    events: await connect(connection, { maxSockets: 8, fence: fences?.work }),
    leader: fences?.leader && (await connect(connection, { maxSockets: 8, fence: fences.leader })),
  };
  return {
    unfenced: new KubeApi(pools.unfenced),
    work: new KubeApi(pools.work),
    events: new KubeApi(pools.events),
    leader: pools.leader && new KubeApi(pools.leader),
    close: () => {
      for (const pool of Object.values(pools)) pool?.close();
    },
  };
}

/** Gives the memory of a burst back once the reconciles go quiet (memory-reclaim.ts). */
function startMemoryReclaim(clock: SystemClock, metrics: ControllerMetrics, logger: Logger): MemoryReclaimer {
  const reclaimer = new MemoryReclaimer({
    clock,
    workDone: () => metrics.reconciles,
    reclaim: memoryReducingGc(),
    reclaimed: ({ ms, work }) =>
      logger.info({ ms: Math.round(ms), reconciles: work }, 'memory given back after a burst'),
  });
  reclaimer.start();
  return reclaimer;
}

/** Builds the whole controller process from options: API client, stores, manager and the probes server. */
export async function startController(
  options: ControllerProcessOptions,
  logger: Logger,
  logContext?: LogContext,
): Promise<RunningController> {
  const clock = new SystemClock();
  const cluster = await loadClusterConfig(options.kubeconfig, { clock });
  const metrics = new ControllerMetrics({ processMetrics: true });
  // The controller's own namespace: where the leader-election Lease and the hostname claims live.
  const ownNamespace = options.leaderElectNamespace ?? cluster.namespace ?? (options.namespace || DEFAULT_NAMESPACE);
  const config = managerConfig(options, ownNamespace);
  const fences = writeFences(config, clock);
  const apis = await connectApis({ cluster, clock, options, metrics }, fences);
  // Local configuration first (a DNS key file that cannot be read fails here, before any API call).
  const records = await createRecordStore(
    options.records,
    (operation, result, seconds) => metrics.observeDns(operation, result, seconds),
    fences?.work,
  );
  try {
    config.gateway = await gatewayConfig(apis.unfenced, options.gateway, logger);
    await checkStartup(apis.unfenced, options, config, logger);
  } catch (error) {
    apis.close();
    throw error;
  }
  const events = new ApiEventRecorder({
    api: apis.events,
    clock,
    logger,
    component: 'staticsite-controller',
    instance: options.identity ?? 'staticsite-controller',
  });
  const children = childRegistry(config.gateway, config.baseDomain, config.ingressClass);
  const manager = new ControllerManager(
    {
      ...{ api: apis.work, electionApi: apis.unfenced, leaderApi: apis.leader, fences },
      ...{ clock, logger, metrics, records, events, logContext, children },
    },
    config,
  );
  const servers = await startObservabilityServers(
    {
      live: manager.liveness(),
      ready: manager.readiness(),
      registry: metrics.registry,
      logger,
      security: options.metricsSecurity?.(apis.unfenced),
    },
    options.observability,
  );
  const { metricsPort, probePort } = servers;
  logger.info(
    {
      namespace: options.namespace || '(all)',
      excludedNamespaces: options.excludeNamespaces,
      claimsNamespace: config.claimsNamespace,
      workers: options.workers,
      leaderElect: config.leaderElection !== undefined,
      shard: options.shard,
      identity: manager.identity,
      metricsPort,
      probePort,
    },
    'staticsite controller starting',
  );
  const reclaimer = startMemoryReclaim(clock, metrics, logger);
  const stopper = new AbortController();
  const done = (async () => {
    try {
      return await manager.run(stopper.signal);
    } finally {
      reclaimer.stop();
      await events.flush();
      await servers.close();
      apis.close();
    }
  })();
  return { manager, metricsPort, probePort, done, stop: () => stopper.abort() };
}
