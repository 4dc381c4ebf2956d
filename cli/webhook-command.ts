import { DEFAULT_BASE_DOMAIN } from '../api/index.ts';
import type { MetricsSecurity } from '../observability/probes-server.ts';
import { createProcessLogger } from '../observability/process-logger.ts';
import { startWebhookServer, type WebhookServerOptions } from '../webhook/server.ts';
import { CONNECTION_SETTINGS, REVIEW_ISOLATION } from '../webhook/server-settings.ts';
import { CredentialsError } from '../webhook/tls/serving-credentials.ts';
import { CommandLine, duration, formatDuration, listenPort, positiveInt } from './flags.ts';
import { processFlags, processSettings } from './observability-flags.ts';
import { type CommandIO, UsageError } from './usage.ts';

/** The conversion port of a `--client-ca` webhook when `--conversion-port` is not given. */
export const DEFAULT_CONVERSION_PORT = 9443;

const WEBHOOK = new CommandLine('webhook', {
  'cert-dir': {
    type: 'string',
    value: 'DIR',
    required: true,
    help: 'a directory with tls.crt and tls.key, reloaded when they change',
  },
  'client-ca': {
    type: 'string',
    value: 'FILE',
    help: 'require callers (the API server) to present a client certificate signed by a CA in FILE; reloaded when it changes',
  },
  port: { type: 'string', default: '8443', help: 'serve /mutate, /validate and /convert here (0: any free port)' },
  'conversion-port': {
    type: 'string',
    value: 'N',
    help: `with --client-ca: serve /convert alone here, no client certificate asked (the API server sends none on CRD conversion calls); default ${DEFAULT_CONVERSION_PORT}`,
  },
  'metrics-port': { type: 'string', default: '8080', help: 'serve /metrics and the probes here (0: any free port)' },
  ...processFlags(),
  host: { type: 'string', value: 'ADDR', help: 'listen on this address only (default every interface)' },
  'base-domain': {
    type: 'string',
    default: DEFAULT_BASE_DOMAIN,
    value: 'D',
    help: 'hostname of a site whose spec has none: NAME.NAMESPACE.D',
  },
  kubeconfig: {
    type: 'string',
    value: 'F',
    help: 'with a cluster (this or in-cluster) the unique-hostname rule is on',
  },
  'shard-leases-namespace': {
    type: 'string',
    value: 'NS',
    help: 'label each StaticSite with its shard of the sharded controllers (controller --sharded) whose Leases are in NS',
  },
  'shutdown-delay': {
    type: 'string',
    default: formatDuration(CONNECTION_SETTINGS.shutdownDelayMs),
    help: 'after SIGTERM, serve (not ready) this long before closing',
  },
  'review-workers': {
    type: 'string',
    default: String(REVIEW_ISOLATION.workers),
    help: 'worker threads deciding the reviews beyond 64 KiB (smaller ones are decided in the main thread), 1-64',
  },
  'review-heap-mb': {
    type: 'string',
    default: String(REVIEW_ISOLATION.resourceLimits.maxOldGenerationSizeMb),
    help: "each worker's heap (old generation) in MiB",
  },
  'review-deadline': {
    type: 'string',
    default: formatDuration(REVIEW_ISOLATION.deadlineMs),
    help: 'a review still running after this is denied and its worker replaced',
  },
});

export const usage = WEBHOOK.synopsis();
export const help = WEBHOOK.help();

type WebhookFlags = ReturnType<typeof WEBHOOK.parse>['values'];

/** With a kubeconfig or inside a cluster the cross-object rule is on; otherwise standalone. */
function hasCluster(kubeconfig: string | undefined): boolean {
  return kubeconfig !== undefined || process.env.KUBERNETES_SERVICE_HOST !== undefined;
}

/** `--client-ca FILE`: absent means server TLS only; an empty value is a usage error. */
export function clientCaFile(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '') throw new UsageError('--client-ca needs a file of PEM CA certificates');
  return value;
}

/**
 * `--conversion-port N`: with `--client-ca`, the port serving /convert without client authentication
 * (default 9443). Without `--client-ca` it is refused: the webhook port serves /convert to anyone then.
 */
export function conversionPort(value: string | undefined, clientCa: string | undefined): number | undefined {
  if (clientCa === undefined) {
    if (value === undefined) return undefined;
    throw new UsageError('--conversion-port needs --client-ca: without it --port serves /convert to every caller');
  }
  return value === undefined ? DEFAULT_CONVERSION_PORT : listenPort('--conversion-port', value);
}

/** The server's options that come from flags alone, every value read and checked. */
function serverOptions(flags: WebhookFlags) {
  const certDir = flags['cert-dir'];
  const metricsPort = listenPort('--metrics-port', flags['metrics-port']);
  const settings = processSettings(flags, { host: flags.host, port: metricsPort });
  return {
    secureMetrics: settings.secureMetrics,
    certDir,
    clientCaFile: clientCaFile(flags['client-ca']),
    conversionPort: conversionPort(flags['conversion-port'], flags['client-ca']),
    port: listenPort('--port', flags.port),
    metricsPort,
    observability: settings.addresses,
    host: flags.host,
    baseDomain: flags['base-domain'],
    shutdownDelayMs: duration('--shutdown-delay', flags['shutdown-delay']),
    isolation: {
      ...REVIEW_ISOLATION,
      workers: positiveInt('--review-workers', flags['review-workers'], 64),
      deadlineMs: duration('--review-deadline', flags['review-deadline'], { positive: true }),
      resourceLimits: {
        ...REVIEW_ISOLATION.resourceLimits,
        maxOldGenerationSizeMb: positiveInt('--review-heap-mb', flags['review-heap-mb'], 65_536),
      },
    },
  };
}

/** Secure metrics authenticate scrapers against the cluster, when there is one. */
async function webhookMetricsSecurity(
  kubeconfig: string | undefined,
  logger: ReturnType<typeof createProcessLogger>,
): Promise<MetricsSecurity | undefined> {
  const { metricsSecurity } = await import('./metrics-security.ts');
  const api = hasCluster(kubeconfig)
    ? async () => {
        const [{ connectKubeApi }, { SystemClock }] = await Promise.all([
          import('../kube/connect.ts'),
          import('../clock/clock.ts'),
        ]);
        return connectKubeApi(kubeconfig, { clock: new SystemClock() });
      }
    : undefined;
  return metricsSecurity(true, api, logger);
}

/** `--shard-leases-namespace NS`: the ring of the sharded controllers, which needs a cluster. */
async function shardSource(flags: WebhookFlags, logger: ReturnType<typeof createProcessLogger>) {
  const namespace = flags['shard-leases-namespace'];
  if (namespace === undefined) return undefined;
  if (!hasCluster(flags.kubeconfig)) {
    throw new UsageError('--shard-leases-namespace needs a cluster: --kubeconfig, or run in one');
  }
  const { shardRingInformer } = await import('../webhook/informers/shard-ring-informer.ts');
  return shardRingInformer({ kubeconfig: flags.kubeconfig, namespace, logger });
}

/** `staticsite webhook`: serves /mutate, /validate and /convert over HTTPS until SIGTERM. */
export async function webhookCommand(args: string[], io: CommandIO): Promise<number> {
  const flags = WEBHOOK.parse(args).values;
  const { secureMetrics, ...options } = serverOptions(flags);
  const logger = createProcessLogger('staticsite-webhook', flags['log-level']);
  // A signal before the webhook serves ends the process at once (nothing is in flight yet); from the
  // moment it serves, a signal drains it. Both handlers are in place before the server starts, so
  // no signal finds the process without one.
  let stop: (signal: string) => void = (signal) => {
    logger.info({ signal }, 'shutting down before serving');
    process.exit(0);
  };
  const onSigterm = () => stop('SIGTERM');
  const onSigint = () => stop('SIGINT');
  process.once('SIGTERM', onSigterm);
  process.once('SIGINT', onSigint);
  const metricsSecurity = secureMetrics ? await webhookMetricsSecurity(flags.kubeconfig, logger) : undefined;
  let webhook: Awaited<ReturnType<typeof startWebhookServer>>;
  try {
    const settings: WebhookServerOptions = {
      ...options,
      logger,
      metricsSecurity,
      // The informer loads only when there is a cluster to watch.
      hostnames: hasCluster(flags.kubeconfig)
        ? await (await import('../webhook/informers/hostname-informer.ts')).hostnameInformer({
            kubeconfig: flags.kubeconfig,
            logger,
          })
        : undefined,
      shards: await shardSource(flags, logger),
    };
    webhook = await startWebhookServer(settings);
  } catch (error) {
    process.off('SIGTERM', onSigterm);
    process.off('SIGINT', onSigint);
    if (error instanceof CredentialsError) {
      io.stderr(`staticsite webhook: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  await new Promise<void>((resolve) => {
    stop = (signal: string) => {
      logger.info({ signal }, 'shutting down');
      webhook.close().then(resolve, resolve);
    };
  });
  return 0;
}

export { webhookCommand as run };
