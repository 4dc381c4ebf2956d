import { DEFAULT_NAMESPACE, SHARD_LEASE_PREFIX } from '../api/index.ts';
import { KubeApi } from '../kube/api-client.ts';
import { SystemClock } from '../kube/clock.ts';
import type { ClusterConfig } from '../kube/cluster.ts';
import { loadClusterConfig } from '../kube/cluster-config.ts';
import { type MetricsSecurity, type ObservabilityAddresses, startObservabilityServers } from '../kube/probes-server.ts';
import type { LogContext } from '../kube/process-logger.ts';
import { HTTPROUTES } from '../kube/resources.ts';
import { TokenBucket } from '../kube/token-bucket.ts';
import { HttpsTransport } from '../kube/transport.ts';
import { childRegistry } from './child-registry.ts';
import { ControllerManager, type ManagerConfig, type RunEnd } from './manager.ts';
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

function connect({ cluster, clock, options, metrics }: Connection, maxSockets?: number): Promise<HttpsTransport> {
  return HttpsTransport.connect(cluster, {
    clock,
    throttle: new TokenBucket(clock, options.qps, options.burst),
    observe: (info) => metrics.observeRequest(info),
    ...(maxSockets !== undefined && { maxSockets }),
  });
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

/** Builds the whole controller process from options: API client, stores, manager and the probes server. */
export async function startController(
  options: ControllerProcessOptions,
  logger: Logger,
  logContext?: LogContext,
): Promise<RunningController> {
  const clock = new SystemClock();
  const cluster = await loadClusterConfig(options.kubeconfig, { clock });
  const metrics = new ControllerMetrics({ processMetrics: true });
  const connection: Connection = { cluster, clock, options, metrics };
  const transport = await connect(connection);
  const api = new KubeApi(transport);
  // The controller's own namespace: where the leader-election Lease and the hostname claims live.
  const ownNamespace = options.leaderElectNamespace ?? cluster.namespace ?? (options.namespace || DEFAULT_NAMESPACE);
  const config = managerConfig(options, ownNamespace);
  // Local configuration first (a DNS key file that cannot be read fails here, before any API call).
  const records = await createRecordStore(options.records, (operation, result, seconds) =>
    metrics.observeDns(operation, result, seconds),
  );
  try {
    config.gateway = await gatewayConfig(api, options.gateway, logger);
    await checkStartup(api, options, config, logger);
  } catch (error) {
    transport.close();
    throw error;
  }
  // Events get their own connection pool and throttle, as controller-runtime's recorder gets its own
  // client: an error storm's events never starve the reconciles' requests, nor the reverse.
  const eventTransport = await connect(connection, 8);
  const events = new ApiEventRecorder({
    api: new KubeApi(eventTransport),
    clock,
    logger,
    component: 'staticsite-controller',
    instance: options.identity ?? 'staticsite-controller',
  });
  const children = childRegistry(config.gateway, config.baseDomain, config.ingressClass);
  const manager = new ControllerManager({ api, clock, logger, metrics, records, events, logContext, children }, config);
  const servers = await startObservabilityServers(
    {
      live: manager.liveness(),
      ready: manager.readiness(),
      registry: metrics.registry,
      logger,
      security: options.metricsSecurity?.(api),
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
  const stopper = new AbortController();
  const done = (async () => {
    try {
      return await manager.run(stopper.signal);
    } finally {
      await events.flush();
      await servers.close();
      transport.close();
      eventTransport.close();
    }
  })();
  return { manager, metricsPort, probePort, done, stop: () => stopper.abort() };
}
