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
import { ReviewPool } from './isolation/review-pool.ts';
import { crossObjectSteps } from './review/cross-object.ts';
import { createReviewPipeline, siteDecisions } from './review/pipeline.ts';
import {
  CONNECTION_SETTINGS,
  REVIEW_ISOLATION,
  type ReviewIsolationSettings,
  TLS_SETTINGS,
} from './server-settings.ts';
import { type ClientCa, readClientCa } from './tls/client-ca.ts';
import { CredentialsReloader } from './tls/credentials-reloader.ts';
import { countHandshakeFailures } from './tls/handshake-failures.ts';
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
  /**
   * `--client-ca`: a file of CA certificates. Callers must then present a client certificate one of
   * them signed, or the TLS handshake fails before any HTTP is read. Reloaded like the cert dir.
   */
  clientCaFile?: string;
  /**
   * With `clientCaFile`: a second HTTPS port, same serving certificate, no client authentication,
   * serving `POST /convert` alone. kube-apiserver presents no client certificate on CRD conversion
   * calls (docs/certs.md), so they come here; /mutate and /validate stay behind the client CA.
   */
  conversionPort?: number;
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
  /** The conversion port (`conversionPort`), when there is one. */
  conversionPort?: number;
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
const CONVERSION_NOT_LISTENING_NOTE = 'the conversion port is not listening yet';
/** What the conversion port serves: a caller without a certificate can only convert what it sends. */
const CONVERSION_ROUTES = ['/convert'] as const;

function tlsOptions(credentials: ServingCredentials, clientCa: ClientCa | undefined) {
  const serving = { cert: credentials.certPem, key: credentials.keyPem, ...TLS_SETTINGS };
  // Without a client CA: server TLS only, as before. With one: no certificate, no handshake.
  return clientCa ? { ...serving, requestCert: true, rejectUnauthorized: true, ca: clientCa.pem } : serving;
}

async function listen(server: HttpsServer, port: number, host: string | undefined): Promise<number> {
  server.listen(port, host);
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** What the readiness checks read, as the server's life goes on. */
interface ServerState {
  draining: boolean;
  listening: boolean;
  /** Whether the conversion port listens; undefined when there is none. */
  conversionListening: boolean | undefined;
  certificateProblem: () => string | undefined;
  clientCaProblem: () => string | undefined;
}

function failing(note: string) {
  return { ok: false, reason: note, note } as const;
}

/** `--client-ca`: the file the next start reads; gone or broken means a restart would fail. */
function clientCaCheck(state: ServerState): Readiness[number] {
  return {
    name: 'client-ca',
    check: () => {
      const problem = state.clientCaProblem();
      return problem === undefined
        ? { ok: true }
        : { ok: false, reason: problem, note: `client CA not usable: ${problem}` };
    },
  };
}

/** `--conversion-port`: ready only once conversion calls can be sent too. */
function conversionPortCheck(state: ServerState): Readiness[number] {
  return {
    name: 'conversion-port',
    check: () => (state.conversionListening ? { ok: true } : failing(CONVERSION_NOT_LISTENING_NOTE)),
  };
}

/** The /readyz checks: each names what is missing. */
function readinessChecks(
  state: ServerState,
  pool: ReviewPool,
  options: { hostnames: HostnameSource | undefined; clientCa: boolean },
): Readiness {
  const { hostnames } = options;
  return [
    {
      // The files the next start reads: gone or broken means a restart would fail.
      name: 'serving-certificate',
      check: () => {
        const problem = state.certificateProblem();
        return problem === undefined
          ? { ok: true }
          : { ok: false, reason: problem, note: `cert dir not usable: ${problem}` };
      },
    },
    ...(options.clientCa ? [clientCaCheck(state)] : []),
    {
      // Standalone there is no cache to wait for, and no rule that needs one.
      name: 'staticsite-cache',
      check: () => {
        if (!hostnames) return { ok: true, note: STANDALONE_NOTE };
        return hostnames.index.synced ? { ok: true } : failing(NOT_SYNCED_NOTE);
      },
    },
    {
      // A review worker replaced after a review ran into its limits takes a moment to start.
      name: 'review-workers',
      check: () => (pool.available ? { ok: true } : failing(NO_WORKER_NOTE)),
    },
    {
      // Ready only once reviews can be sent: the probes answer before the webhook port listens.
      name: 'webhook-port',
      check: () => (state.listening ? { ok: true } : failing(NOT_LISTENING_NOTE)),
    },
    ...(state.conversionListening === undefined ? [] : [conversionPortCheck(state)]),
    { name: 'shutdown', check: () => (state.draining ? failing(SHUTTING_DOWN_NOTE) : { ok: true }) },
  ];
}

/** The review workers, reporting replacements and their queue to the metrics. */
function reviewPool(options: WebhookServerOptions, isolation: ReviewIsolationSettings, metrics: WebhookMetrics) {
  return new ReviewPool({
    ...isolation,
    workerData: { baseDomain: options.baseDomain, limits: {} },
    logger: options.logger,
    observer: {
      replaced: (reason) => metrics.workersReplaced.inc({ reason }),
      queueLength: (length) => metrics.reviewQueueLength.set(length),
    },
  });
}

type Listener = ReturnType<typeof createWebhookListener>;

/**
 * The request listeners: one review pipeline (decisions, isolation, cross-object steps) behind the
 * front door of each port: every route on the webhook port, `/convert` alone on the conversion port.
 */
function webhookListeners(
  options: WebhookServerOptions,
  context: { pool: ReviewPool; isolation: ReviewIsolationSettings; metrics: WebhookMetrics; readiness: Readiness },
): { webhook: Listener; conversion: Listener } {
  const { pool, isolation, metrics } = context;
  const pipeline = createReviewPipeline({
    decisions: siteDecisions({ baseDomain: options.baseDomain }),
    steps: crossObjectSteps({ hostnames: options.hostnames?.index, shards: options.shards?.assigner }),
    isolation: { workers: pool, inThread: isolation.inThread },
    placed: (thread) => metrics.reviewsPlaced.inc({ thread }),
  });
  const shared = { pipeline, metrics, logger: options.logger, maxBodyBytes: CONNECTION_SETTINGS.maxBodyBytes };
  return {
    webhook: createWebhookListener({ ...shared, readiness: context.readiness }),
    conversion: createWebhookListener({ ...shared, routes: CONVERSION_ROUTES }),
  };
}

/** The HTTPS server with the shipped connection settings; while draining, every answer closes its connection. */
function httpsServer(
  tls: ReturnType<typeof tlsOptions>,
  reviews: Listener,
  context: { state: ServerState; metrics: WebhookMetrics },
): HttpsServer {
  const { state, metrics } = context;
  // Callers of a draining pod dial again and reach a pod that is staying.
  const listener: typeof reviews = (req, res) => {
    if (state.draining) res.setHeader('Connection', 'close');
    reviews(req, res);
  };
  const server = createHttpsServer(
    {
      ...tls,
      handshakeTimeout: CONNECTION_SETTINGS.handshakeTimeoutMs,
      headersTimeout: CONNECTION_SETTINGS.headersTimeoutMs,
      requestTimeout: CONNECTION_SETTINGS.requestTimeoutMs,
      connectionsCheckingInterval: CONNECTION_SETTINGS.timeoutCheckIntervalMs,
      keepAliveTimeout: CONNECTION_SETTINGS.keepAliveTimeoutMs,
    },
    listener,
  );
  server.maxConnections = CONNECTION_SETTINGS.maxConnections;
  keepConnectionsFair(server, CONNECTION_SETTINGS, (reason) => metrics.connectionsReclaimed.inc({ reason }));
  countHandshakeFailures(server, (reason) => metrics.handshakeFailures.inc({ reason }));
  // `Expect: 100-continue` with a body over the limit gets no `100 Continue`: the endpoint answers 413.
  // Emitted as 'request', as Node does without this listener, so the fairness rule sees it too.
  server.on('checkContinue', (req, res) => {
    if (!(Number(req.headers['content-length']) > CONNECTION_SETTINGS.maxBodyBytes)) res.writeContinue();
    server.emit('request', req, res);
  });
  return server;
}

/** Everything close() stops, in the order it stops them. */
interface Parts {
  /** The webhook port's server, then the conversion port's when there is one. */
  https: HttpsServer[];
  reloader: CredentialsReloader;
  pool: ReviewPool;
  servers: { close(): Promise<void> };
}

/** Drains (not ready, serving) for the shutdown delay, then stops accepting and waits for in-flight requests. */
async function shutDown(options: WebhookServerOptions, state: ServerState, parts: Parts): Promise<void> {
  const { logger } = options;
  state.draining = true;
  const delayMs = options.shutdownDelayMs ?? 0;
  if (delayMs > 0) {
    logger.info({ delayMs }, 'draining: serving, not ready, closing each connection after its answer');
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  parts.reloader.stop();
  const closed = Promise.all(
    parts.https.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
  );
  for (const server of parts.https) server.closeIdleConnections();
  const grace = setTimeout(() => {
    for (const server of parts.https) server.closeAllConnections();
  }, options.shutdownGraceMs ?? 10_000);
  await closed;
  clearTimeout(grace);
  await parts.pool.close();
  await parts.servers.close();
  await options.hostnames?.stop();
  await options.shards?.stop();
  logger.info({}, 'webhook stopped');
}

/**
 * Re-reads the cert dir and the client CA file, handing each change to the running servers: a new
 * serving certificate to both ports, a new client CA to the webhook port (the conversion port asks for none).
 */
function tlsReloader(
  options: WebhookServerOptions,
  context: { server: HttpsServer; conversion?: HttpsServer; metrics: WebhookMetrics; fs: CredentialsFileSystem },
  initial: { credentials: ServingCredentials; clientCa: ClientCa | undefined },
): CredentialsReloader {
  const { server, conversion, metrics } = context;
  const reloader: CredentialsReloader = new CredentialsReloader(initial.credentials, {
    dir: options.certDir,
    logger: options.logger,
    intervalMs: options.certCheckIntervalMs,
    fs: context.fs,
    onReload: (next) => {
      server.setSecureContext(tlsOptions(next, reloader.clientCa));
      conversion?.setSecureContext(tlsOptions(next, undefined));
      metrics.certExpiry.set(next.notAfter.getTime() / 1000);
      metrics.certReloads.inc();
    },
    clientCa:
      options.clientCaFile && initial.clientCa
        ? {
            file: options.clientCaFile,
            initial: initial.clientCa,
            onReload: (next) => server.setSecureContext(tlsOptions(reloader.credentials, next)),
          }
        : undefined,
  });
  return reloader;
}

/** The HTTPS servers, not yet listening: the webhook port, and the conversion port with `conversionPort`. */
function httpsServers(
  options: WebhookServerOptions,
  listeners: ReturnType<typeof webhookListeners>,
  context: { state: ServerState; metrics: WebhookMetrics },
  initial: { credentials: ServingCredentials; clientCa: ClientCa | undefined },
): { server: HttpsServer; conversion?: HttpsServer } {
  const server = httpsServer(tlsOptions(initial.credentials, initial.clientCa), listeners.webhook, context);
  if (options.conversionPort === undefined) return { server };
  // Without client authentication: kube-apiserver presents no certificate on conversion calls.
  return { server, conversion: httpsServer(tlsOptions(initial.credentials, undefined), listeners.conversion, context) };
}

/** Opens the ports: the conversion port first, so the webhook port's listening means both are. */
async function listenAll(
  options: WebhookServerOptions,
  https: { server: HttpsServer; conversion?: HttpsServer },
  state: ServerState,
): Promise<{ port: number; conversionPort?: number }> {
  let conversionPort: number | undefined;
  if (https.conversion && options.conversionPort !== undefined) {
    conversionPort = await listen(https.conversion, options.conversionPort, options.host);
    state.conversionListening = true;
  }
  const port = await listen(https.server, options.port, options.host);
  state.listening = true;
  return { port, conversionPort };
}

/** Starts the HTTPS webhook (and its conversion port) and the plain-HTTP probes and metrics listener. */
export async function startWebhookServer(options: WebhookServerOptions): Promise<RunningWebhook> {
  const { logger } = options;
  if (options.conversionPort !== undefined && options.clientCaFile === undefined) {
    throw new Error('conversionPort is for a webhook with clientCaFile: without one the webhook port serves /convert');
  }
  const fs = options.fs ?? (await import('node:fs/promises'));
  const credentials = await readServingCredentials(fs, options.certDir);
  const clientCa = options.clientCaFile === undefined ? undefined : await readClientCa(fs, options.clientCaFile);
  const metrics = new WebhookMetrics();
  metrics.certExpiry.set(credentials.notAfter.getTime() / 1000);
  const isolation = options.isolation ?? REVIEW_ISOLATION;
  const pool = reviewPool(options, isolation, metrics);
  const poolStarted = pool.start();
  const state: ServerState = {
    draining: false,
    listening: false,
    conversionListening: options.conversionPort === undefined ? undefined : false,
    certificateProblem: () => undefined,
    clientCaProblem: () => undefined,
  };
  const readiness = readinessChecks(state, pool, { hostnames: options.hostnames, clientCa: clientCa !== undefined });
  const listeners = webhookListeners(options, { pool, isolation, metrics, readiness });
  const https = httpsServers(options, listeners, { state, metrics }, { credentials, clientCa });
  const reloader = tlsReloader(options, { ...https, metrics, fs }, { credentials, clientCa });
  state.certificateProblem = () => reloader.problem;
  state.clientCaProblem = () => reloader.clientCaProblem;

  // Probes answer from the first moment (/readyz?verbose says what is missing); reviews are served
  // once the StaticSite cache has synced, so the unique-hostname rule never judges from an empty cache.
  const servers = await startObservabilityServers(
    { ready: readiness, registry: metrics.registry, logger, security: options.metricsSecurity },
    options.observability ?? { metrics: { host: options.host, port: options.metricsPort } },
  );
  try {
    await poolStarted;
  } catch (error) {
    await pool.close();
    await servers.close();
    throw error;
  }
  await options.hostnames?.start();
  await options.shards?.start();
  reloader.start();
  const { port, conversionPort } = await listenAll(options, https, state);
  const metricsPort = servers.metricsPort ?? 0;
  const probePort = servers.probePort;
  logger.info(
    {
      port,
      conversionPort,
      metricsPort,
      probePort,
      certNotAfter: credentials.notAfter.toISOString(),
      clientAuth: clientCa ? `required (CA file ${options.clientCaFile})` : 'off',
      crossObjectRule: options.hostnames ? 'on' : 'off (standalone: no kubeconfig and not in a cluster)',
      shardLabels: options.shards ? 'on' : 'off',
    },
    'webhook serving',
  );
  const parts = {
    https: https.conversion ? [https.server, https.conversion] : [https.server],
    reloader,
    pool,
    servers,
  };
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= shutDown(options, state, parts);
    return closing;
  };
  return { port, conversionPort, metricsPort, probePort, metrics, readiness, close };
}
