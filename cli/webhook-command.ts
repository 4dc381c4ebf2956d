import { parseArgs } from 'node:util';
import { DEFAULT_BASE_DOMAIN } from '../api/index.ts';
import { parseDuration } from '../controller/duration.ts';
import { createProcessLogger, logLevelProblem } from '../kube/process-logger.ts';
import { startWebhookServer } from '../webhook/server.ts';
import { CONNECTION_SETTINGS, REVIEW_ISOLATION } from '../webhook/server-settings.ts';
import { CredentialsError } from '../webhook/tls/serving-credentials.ts';
import { metricsSecureFlag, OBSERVABILITY_OPTIONS, observabilityAddresses } from './observability-flags.ts';
import { type CommandIO, UsageError } from './usage.ts';

export const webhookUsage =
  'staticsite webhook --cert-dir DIR [--port 8443] [--metrics-port 8080] [--metrics-bind-address HOST:PORT] [--health-probe-bind-address HOST:PORT] [--host ADDR] [--base-domain D] [--kubeconfig F] [--shutdown-delay 5s] [--review-workers 2] [--review-heap-mb 64] [--review-deadline 2s] [--metrics-secure true|false] [--log-level info]';

function port(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`${flag} must be a port number, got "${value}"`);
  return n;
}

function positiveCount(value: string, flag: string, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw new UsageError(`${flag} must be a whole number from 1 to ${max}, got "${value}"`);
  return n;
}

/** With a kubeconfig or inside a cluster the cross-object rule is on; otherwise standalone. */
function hasCluster(kubeconfig: string | undefined): boolean {
  return kubeconfig !== undefined || process.env.KUBERNETES_SERVICE_HOST !== undefined;
}

/** `staticsite webhook`: serves /mutate, /validate and /convert over HTTPS until SIGTERM. */
export async function webhookCommand(args: string[], io: CommandIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      'cert-dir': { type: 'string' },
      port: { type: 'string', default: '8443' },
      'metrics-port': { type: 'string', default: '8080' },
      host: { type: 'string' },
      'base-domain': { type: 'string', default: DEFAULT_BASE_DOMAIN },
      kubeconfig: { type: 'string' },
      'shutdown-delay': { type: 'string', default: `${CONNECTION_SETTINGS.shutdownDelayMs / 1000}s` },
      'review-workers': { type: 'string', default: String(REVIEW_ISOLATION.workers) },
      'review-heap-mb': { type: 'string', default: String(REVIEW_ISOLATION.resourceLimits.maxOldGenerationSizeMb) },
      'review-deadline': { type: 'string', default: `${REVIEW_ISOLATION.deadlineMs / 1000}s` },
      'log-level': { type: 'string', default: 'info' },
      ...OBSERVABILITY_OPTIONS,
    },
    strict: true,
    allowPositionals: false,
  });
  if (!values['cert-dir']) throw new UsageError('--cert-dir is required (a directory with tls.crt and tls.key)');
  const levelProblem = logLevelProblem(values['log-level']);
  if (levelProblem) throw new UsageError(levelProblem);
  const duration = (flag: 'shutdown-delay' | 'review-deadline') => {
    try {
      return parseDuration(values[flag]);
    } catch (error) {
      throw new UsageError(`--${flag}: ${(error as Error).message}`);
    }
  };
  const shutdownDelayMs = duration('shutdown-delay');
  const deadlineMs = duration('review-deadline');
  if (deadlineMs <= 0) throw new UsageError('--review-deadline must be longer than 0s');
  const isolation = {
    ...REVIEW_ISOLATION,
    workers: positiveCount(values['review-workers'], '--review-workers', 64),
    deadlineMs,
    resourceLimits: {
      ...REVIEW_ISOLATION.resourceLimits,
      maxOldGenerationSizeMb: positiveCount(values['review-heap-mb'], '--review-heap-mb', 65_536),
    },
  };
  const secureMetrics = metricsSecureFlag(values['metrics-secure']);
  const logger = createProcessLogger('staticsite-webhook', values['log-level']);
  const cluster = hasCluster(values.kubeconfig);
  const metricsSecurity = secureMetrics
    ? await (await import('./metrics-security.ts')).metricsSecurity(
        true,
        cluster
          ? async () => {
              const [{ connectKubeApi }, { SystemClock }] = await Promise.all([
                import('../kube/connect.ts'),
                import('../kube/clock.ts'),
              ]);
              return connectKubeApi(values.kubeconfig, { clock: new SystemClock() });
            }
          : undefined,
        logger,
      )
    : undefined;
  let webhook: Awaited<ReturnType<typeof startWebhookServer>>;
  try {
    webhook = await startWebhookServer({
      certDir: values['cert-dir'],
      port: port(values.port, '--port'),
      metricsPort: port(values['metrics-port'], '--metrics-port'),
      observability: observabilityAddresses(values, {
        host: values.host,
        port: port(values['metrics-port'], '--metrics-port'),
      }),
      host: values.host,
      baseDomain: values['base-domain'],
      shutdownDelayMs,
      isolation,
      logger,
      // The informer loads only when there is a cluster to watch.
      metricsSecurity,
      hostnames: cluster
        ? await (await import('../webhook/kube/hostname-informer.ts')).hostnameInformer({
            kubeconfig: values.kubeconfig,
            logger,
          })
        : undefined,
    });
  } catch (error) {
    if (error instanceof CredentialsError) {
      io.stderr(`staticsite webhook: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'shutting down');
      webhook.close().then(resolve, resolve);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  return 0;
}
