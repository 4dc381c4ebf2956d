import { once } from 'node:events';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import {
  type MetricsSecurity,
  type ObservabilityAddresses,
  startObservabilityServers,
} from '../observability/probes-server.ts';
import type { HostnameIndex } from './admission/hostname-index.ts';
import type { ShardAssigner } from './admission/shard-label.ts';
import { keepConnectionsFair } from './http/connection-fairness.ts';
import { createWebhookListener, type Readiness } from './http/listener.ts';
import { WebhookMetrics } from './http/metrics.ts';
import { type ReviewIsolationSettings, ReviewPool } from './isolation/review-pool.ts';
import { CONNECTION_SETTINGS, REVIEW_ISOLATION, TLS_SETTINGS } from './server-settings.ts';
import { CredentialsReloader } from './tls/credentials-reloader.ts';
import {
  type CredentialsFileSystem,
  readServingCredentials,
  type ServingCredentials,
} from './tls/serving-credentials.ts';

/** Where the cross-object rule reads other StaticSites from; absent in standalone mode. */
export interface HostnameSource {
  index: HostnameIndex;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The sharded controllers' ring (`--shard-leases-namespace`): absent, sites get no shard label. */
export interface ShardSource {
  assigner: ShardAssigner;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface WebhookServerOptions {
  certDir: string;
  port: number;
  metricsPort: number;
  host?: string;
  /** Overrides metricsPort and host for /metrics, and may add a probes-only server (the CLI's flags). */
  observability?: ObservabilityAddresses;
  baseDomain: string;
  logger: Logger;
  hostnames?: HostnameSource;
  shards?: ShardSource;
  fs?: CredentialsFileSystem;
  /** How long SIGTERM waits for in-flight requests before closing connections. */
  shutdownGraceMs?: number;
  /** How long close() keeps serving, not ready, before it stops accepting. Default: none. */
  shutdownDelayMs?: number;
  certCheckIntervalMs?: number;
  /** HTTPS and authorized /metrics (the CLI's --metrics-secure); none: plain HTTP. */
  metricsSecurity?: MetricsSecurity;
  /** How reviews are isolated in worker threads; default REVIEW_ISOLATION (server-settings.ts). */
  isolation?: ReviewIsolationSettings;
}

export interface RunningWebhook {
  port: number;
  /** The metrics server's port (0 when it is off). */
  metricsPort: number;
  probePort?: number;
  metrics: WebhookMetrics;
  /** The /readyz checks (observability/probes-server.ts). */
  readiness: Readiness;
  /** Stop accepting, finish in-flight requests, close. */
  close(): Promise<void>;
}

const STANDALONE_NOTE = 'standalone: no cluster access, the unique-hostname rule is off';
const NOT_SYNCED_NOTE = 'StaticSite cache not synced yet';
const SHUTTING_DOWN_NOTE = 'shutting down: serving the last reviews';
const NO_WORKER_NOTE = 'no review worker is running yet';
const NOT_LISTENING_NOTE = 'the webhook port is not listening yet';

function tlsOptions(credentials: ServingCredentials) {
  return { cert: credentials.certPem, key: credentials.keyPem, ...TLS_SETTINGS };
}

async function listen(server: HttpsServer, port: number, host: string | undefined): Promise<number> {
  server.listen(port, host);
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** Starts the HTTPS webhook and the plain-HTTP probes and metrics listener. */
export async function startWebhookServer(options: WebhookServerOptions): Promise<RunningWebhook> {
  const { logger } = options;
  const fs = options.fs ?? (await import('node:fs/promises'));
  const credentials = await readServingCredentials(fs, options.certDir);
  const metrics = new WebhookMetrics();
  metrics.certExpiry.set(credentials.notAfter.getTime() / 1000);

  const hostnames = options.hostnames;
  const pool = new ReviewPool({
    ...(options.isolation ?? REVIEW_ISOLATION),
    workerData: { baseDomain: options.baseDomain, limits: {} },
    logger,
    observer: {
      replaced: (reason) => metrics.workersReplaced.inc({ reason }),
      queueLength: (length) => metrics.reviewQueueLength.set(length),
    },
  });
  const poolStarted = pool.start();
  let draining = false;
  let listening = false;
  let certificateProblem = (): string | undefined => undefined;
  const readiness: Readiness = [
    {
      // The files the next start reads: gone or broken means a restart would fail.
      name: 'serving-certificate',
      check: () => {
        const problem = certificateProblem();
        return problem === undefined
          ? { ok: true }
          : { ok: false, reason: problem, note: `cert dir not usable: ${problem}` };
      },
    },
    {
      // Standalone there is no cache to wait for, and no rule that needs one.
      name: 'staticsite-cache',
      check: () => {
        if (!hostnames) return { ok: true, note: STANDALONE_NOTE };
        if (hostnames.index.synced) return { ok: true };
        return { ok: false, reason: NOT_SYNCED_NOTE, note: NOT_SYNCED_NOTE };
      },
    },
    {
      // A review worker replaced after a review ran into its limits takes a moment to start.
      name: 'review-workers',
      check: () => (pool.readyWorkers > 0 ? { ok: true } : { ok: false, reason: NO_WORKER_NOTE, note: NO_WORKER_NOTE }),
    },
    {
      // Ready only once reviews can be sent: the probes answer before the webhook port listens.
      name: 'webhook-port',
      check: () => (listening ? { ok: true } : { ok: false, reason: NOT_LISTENING_NOTE, note: NOT_LISTENING_NOTE }),
    },
    {
      name: 'shutdown',
      check: () => (draining ? { ok: false, reason: SHUTTING_DOWN_NOTE, note: SHUTTING_DOWN_NOTE } : { ok: true }),
    },
  ];
  const reviews = createWebhookListener({
    evaluate: (task) => pool.evaluate(task),
    hostnames: hostnames?.index,
    shards: options.shards?.assigner,
    metrics,
    logger,
    readiness,
    maxBodyBytes: CONNECTION_SETTINGS.maxBodyBytes,
  });
  // While draining, every answer closes its connection, so callers dial again and reach a pod
  // that is staying.
  const listener: typeof reviews = (req, res) => {
    if (draining) res.setHeader('Connection', 'close');
    reviews(req, res);
  };

  const server = createHttpsServer(
    {
      ...tlsOptions(credentials),
      handshakeTimeout: CONNECTION_SETTINGS.handshakeTimeoutMs,
      headersTimeout: CONNECTION_SETTINGS.headersTimeoutMs,
      requestTimeout: CONNECTION_SETTINGS.requestTimeoutMs,
      connectionsCheckingInterval: CONNECTION_SETTINGS.timeoutCheckIntervalMs,
      keepAliveTimeout: CONNECTION_SETTINGS.keepAliveTimeoutMs,
    },
    listener,
  );
  server.maxConnections = CONNECTION_SETTINGS.maxConnections;
  keepConnectionsFair(server, CONNECTION_SETTINGS);
  // `Expect: 100-continue` with a body over the limit gets no `100 Continue`: the endpoint answers 413.
  server.on('checkContinue', (req, res) => {
    if (!(Number(req.headers['content-length']) > CONNECTION_SETTINGS.maxBodyBytes)) res.writeContinue();
    listener(req, res);
  });
  const reloader = new CredentialsReloader(credentials, {
    dir: options.certDir,
    logger,
    intervalMs: options.certCheckIntervalMs,
    fs,
    onReload: (next) => {
      server.setSecureContext(tlsOptions(next));
      metrics.certExpiry.set(next.notAfter.getTime() / 1000);
      metrics.certReloads.inc();
    },
  });

  certificateProblem = () => reloader.problem;

  // Probes answer from the first moment (/readyz?verbose says what is missing); reviews are served
  // once the StaticSite cache has synced, so the unique-hostname rule never judges from an empty cache.
  const servers = await startObservabilityServers(
    { ready: readiness, registry: metrics.registry, logger, security: options.metricsSecurity },
    options.observability ?? { metrics: { host: options.host, port: options.metricsPort } },
  );
  const metricsPort = servers.metricsPort ?? 0;
  const probePort = servers.probePort;
  try {
    await poolStarted;
  } catch (error) {
    await pool.close();
    await servers.close();
    throw error;
  }
  if (hostnames) await hostnames.start();
  await options.shards?.start();
  reloader.start();
  const port = await listen(server, options.port, options.host);
  listening = true;
  logger.info(
    {
      port,
      metricsPort,
      probePort,
      certNotAfter: credentials.notAfter.toISOString(),
      crossObjectRule: hostnames ? 'on' : 'off (standalone: no kubeconfig and not in a cluster)',
      shardLabels: options.shards ? 'on' : 'off',
    },
    'webhook serving',
  );

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      draining = true;
      const delayMs = options.shutdownDelayMs ?? 0;
      if (delayMs > 0) {
        logger.info({ delayMs }, 'draining: serving, not ready, closing each connection after its answer');
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
      reloader.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), options.shutdownGraceMs ?? 10_000);
      await closed;
      clearTimeout(grace);
      await pool.close();
      await servers.close();
      await hostnames?.stop();
      await options.shards?.stop();
      logger.info({}, 'webhook stopped');
    })();
    return closing;
  };
  return { port, metricsPort, probePort, metrics, readiness, close };
}
