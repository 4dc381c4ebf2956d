import { parseArgs } from 'node:util';
import type { DestinationStream } from 'pino';
import type { CertStore } from '../certs/index.ts';
import type { KubeApi } from '../kube/api-client.ts';
import type { Clock } from '../kube/clock.ts';
import { metricsSecureFlag, OBSERVABILITY_OPTIONS, observabilityAddresses } from './observability-flags.ts';
import { type CommandIO, UsageError } from './usage.ts';

export const certsUsage =
  'staticsite certs bootstrap --service NAME --namespace NS [--san X]... (--out-dir DIR | --secret NAME [--ca-secret NAME]) ' +
  '[--webhook-config [mutating/|validating/]NAME]... [--crd NAME]... [--kubeconfig F] [--watch [--check-interval 10m] [--metrics-port N] ' +
  '[--metrics-bind-address HOST:PORT] [--health-probe-bind-address HOST:PORT] [--metrics-secure true|false]] ' +
  '[--ca-validity-days N] [--serving-validity-days N] [--ca-overlap 90d] [--key-algorithm ECDSA|RSA] [--rotate-ca] [--renew] [--log-level info]';

/** What the command needs from the outside world; tests replace any of it. */
export interface CertsCommandDeps {
  /** Reads the time and sleeps between --watch passes. */
  clock: Clock;
  /** Aborts --watch. Default: SIGTERM or SIGINT. */
  signal?: AbortSignal;
  /** Builds the API client. Default: kube/connect.ts (--kubeconfig, in-cluster, $KUBECONFIG, ~/.kube/config). */
  kubeApi: (kubeconfig: string | undefined) => Promise<KubeApi>;
  generateKey?: (spec: import('../certs/x509.ts').KeySpec) => Promise<string>;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The real clock and API server, loaded on first use so other commands do not pay for them; the
 * cluster connection (kube/connect.ts) is made only when a run talks to a cluster.
 */
async function defaultDeps(): Promise<CertsCommandDeps> {
  const [{ API_REQUEST_TIMEOUT_MS }, { SystemClock }, { connectKubeApi }] = await Promise.all([
    import('../certs/config.ts'),
    import('../kube/clock.ts'),
    import('../kube/connect.ts'),
  ]);
  // Between --watch passes the sleep may be all that keeps the process alive: its timers stay ref'd.
  const clock = new SystemClock({ unrefTimers: false });
  return {
    clock,
    kubeApi: (kubeconfig) => connectKubeApi(kubeconfig, { clock, requestTimeoutMs: API_REQUEST_TIMEOUT_MS }),
  };
}

function positiveInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} must be a positive whole number, got "${value}"`);
  return n;
}

/** `90s`, `10m`, `1h`, `2d` (or plain milliseconds). */
export function parseDuration(flag: string, value: string): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(value.trim());
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: DAY_MS };
  if (!match) throw new UsageError(`${flag} must be a duration like 90s, 10m, 1h or 2d, got "${value}"`);
  const ms = Number(match[1]) * (units[match[2] ?? 'ms'] ?? 1);
  if (ms < 1000) throw new UsageError(`${flag} must be at least 1s`);
  return ms;
}

/** `staticsite certs bootstrap`: issue, store, inject, and with --watch keep renewing. */
export async function certsCommand(args: string[], io: CommandIO, injected?: CertsCommandDeps): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'bootstrap') throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand "bootstrap"');
  const { values } = parseArgs({
    args: rest,
    options: {
      service: { type: 'string' },
      namespace: { type: 'string' },
      san: { type: 'string', multiple: true, default: [] },
      'out-dir': { type: 'string' },
      secret: { type: 'string' },
      'ca-secret': { type: 'string' },
      'webhook-config': { type: 'string', multiple: true, default: [] },
      crd: { type: 'string', multiple: true, default: [] },
      kubeconfig: { type: 'string' },
      watch: { type: 'boolean', default: false },
      'check-interval': { type: 'string' },
      'metrics-port': { type: 'string' },
      ...OBSERVABILITY_OPTIONS,
      'ca-validity-days': { type: 'string' },
      'serving-validity-days': { type: 'string' },
      'ca-overlap': { type: 'string' },
      'key-algorithm': { type: 'string' },
      'rotate-ca': { type: 'boolean', default: false },
      renew: { type: 'boolean', default: false },
      'log-level': { type: 'string', default: 'info' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (!values.service) throw new UsageError('--service is required');
  if (!values.namespace) throw new UsageError('--namespace is required');
  if (!values['out-dir'] === !values.secret) throw new UsageError('exactly one of --out-dir and --secret is required');
  if (values['ca-secret'] && !values.secret) throw new UsageError('--ca-secret needs --secret');
  const served = values['metrics-port'] ?? values['metrics-bind-address'] ?? values['health-probe-bind-address'];
  if (!values.watch && (values['check-interval'] || served !== undefined)) {
    throw new UsageError(
      '--check-interval, --metrics-port, --metrics-bind-address and --health-probe-bind-address need --watch',
    );
  }
  const {
    bootstrap,
    KEY_ALGORITHMS,
    CertsMetrics,
    DEFAULT_CHECK_INTERVAL_MS,
    DirectoryStore,
    defaultConfig,
    KubeBundleInjector,
    PassStatus,
    SecretStore,
    watch,
  } = await import('../certs/index.ts');
  const { createProcessLogger, logLevelProblem } = await import('../kube/process-logger.ts');
  const { Registry } = await import('prom-client');
  const deps = injected ?? (await defaultDeps());
  const caValidityDays = positiveInt('--ca-validity-days', values['ca-validity-days']);
  const servingValidityDays = positiveInt('--serving-validity-days', values['serving-validity-days']);
  const checkIntervalMs = values['check-interval']
    ? parseDuration('--check-interval', values['check-interval'])
    : DEFAULT_CHECK_INTERVAL_MS;
  const metricsPort = values['metrics-port'] === undefined ? undefined : Number(values['metrics-port']);
  if (metricsPort !== undefined && !(Number.isInteger(metricsPort) && metricsPort >= 0 && metricsPort < 65536)) {
    throw new UsageError(`--metrics-port must be a port number, got "${values['metrics-port']}"`);
  }
  const levelProblem = logLevelProblem(values['log-level']);
  if (levelProblem) throw new UsageError(levelProblem);
  const secureMetrics = metricsSecureFlag(values['metrics-secure']);

  const keyAlgorithm = values['key-algorithm'];
  if (keyAlgorithm !== undefined && !KEY_ALGORITHMS.includes(keyAlgorithm as never)) {
    throw new UsageError(`--key-algorithm must be ${KEY_ALGORITHMS.join(' or ')}, got "${keyAlgorithm}"`);
  }
  const config = defaultConfig(values.service, values.namespace, {
    extraSans: values.san,
    ...(keyAlgorithm !== undefined && { keyAlgorithm: keyAlgorithm as 'ECDSA' | 'RSA' }),
    ...(caValidityDays !== undefined && { caValidityDays }),
    ...(servingValidityDays !== undefined && { servingValidityDays }),
    ...(values['ca-overlap'] !== undefined && { caOverlapMs: parseDuration('--ca-overlap', values['ca-overlap']) }),
    forceCaRotation: values['rotate-ca'],
    forceServingRenewal: values.renew,
  });
  if (config.servingValidityDays * 3 > config.caValidityDays) {
    throw new UsageError('--serving-validity-days must be at most a third of --ca-validity-days');
  }
  const needsKube = Boolean(values.secret) || values['webhook-config'].length > 0 || values.crd.length > 0;
  const api = needsKube ? await deps.kubeApi(values.kubeconfig) : undefined;
  const store: CertStore = values.secret
    ? new SecretStore(api as KubeApi, values.namespace, values.secret, values['ca-secret'])
    : new DirectoryStore(values['out-dir'] as string);
  const injector =
    values['webhook-config'].length > 0 || values.crd.length > 0
      ? new KubeBundleInjector(api as KubeApi, { webhookConfigs: values['webhook-config'], crds: values.crd })
      : undefined;
  const destination: DestinationStream = { write: (line: string) => io.stdout(line) };
  const logger = createProcessLogger('staticsite-certs', values['log-level'], { destination });
  const registry = new Registry();
  const metrics = new CertsMetrics(registry);
  const bootstrapDeps = {
    store,
    ...(injector && { injector }),
    clock: deps.clock,
    logger,
    metrics,
    ...(deps.generateKey && { generateKey: deps.generateKey }),
  };

  if (!values.watch) {
    try {
      await bootstrap(config, bootstrapDeps);
    } catch (error) {
      // One JSON line for log pipelines; main prints the message on stderr and exits 1.
      logger.error(
        { event: 'bootstrap-failed', code: (error as { code?: string }).code, err: (error as Error).message },
        'bootstrap failed',
      );
      throw error;
    }
    return 0;
  }

  // A one-pass run with the operator's --rotate-ca/--renew, then the loop without them.
  const loopConfig = { ...config, forceCaRotation: false, forceServingRenewal: false };
  let first = true;
  const signal = deps.signal ?? processSignal();
  const status = new PassStatus();
  let server: { close(): Promise<void> } | undefined;
  if (served !== undefined) {
    const { startObservabilityServers } = await import('../kube/probes-server.ts');
    const addresses = observabilityAddresses(values, { port: metricsPort ?? 8080 });
    const { metricsSecurity } = await import('./metrics-security.ts');
    const security = await metricsSecurity(secureMetrics, api ? async () => api : undefined, logger);
    const servers = await startObservabilityServers({ ready: [status], registry, logger, security }, addresses);
    server = servers;
    logger.info(
      { event: 'status-listening', port: servers.metricsPort, probePort: servers.probePort },
      'serving /metrics, /healthz, /livez and /readyz',
    );
  }
  try {
    await watch(
      () => {
        const c = first ? config : loopConfig;
        first = false;
        return bootstrap(c, bootstrapDeps);
      },
      {
        clock: deps.clock,
        logger,
        signal,
        checkIntervalMs,
        onPass: ({ error }) =>
          error === undefined ? status.succeeded(new Date(deps.clock.now())) : status.failed(error),
      },
    );
  } finally {
    await server?.close();
  }
  return 0;
}

function processSignal(): AbortSignal {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return controller.signal;
}
