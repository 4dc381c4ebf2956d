import type { DestinationStream } from 'pino';
import {
  API_REQUEST_TIMEOUT_MS,
  type CertsConfig,
  DEFAULT_CA_VALIDITY_DAYS,
  DEFAULT_CHECK_INTERVAL_MS,
  DEFAULT_SERVING_VALIDITY_DAYS,
  defaultConfig,
  KEY_ALGORITHMS,
} from '../certs/config.ts';
import type { CertStore } from '../certs/index.ts';
import type { Clock } from '../clock/clock.ts';
import type { KubeApi } from '../kube/api-client.ts';
import type { ObservabilityAddresses } from '../observability/probes-server.ts';
import { terminationSignal } from '../process/termination-signal.ts';
import { APISERVER_CLIENT } from './certs-apiserver-client.ts';
import {
  CommandLine,
  duration,
  formatDuration,
  helpOf,
  listenPort,
  oneOf,
  positiveInt,
  subcommand,
  usageOf,
} from './flags.ts';
import { processFlags, processSettings } from './observability-flags.ts';
import { type CommandIO, UsageError } from './usage.ts';

const BOOTSTRAP = new CommandLine('certs bootstrap', {
  service: {
    type: 'string',
    value: 'NAME',
    required: true,
    help: 'the webhook Service: it and --namespace give the default SANs',
  },
  namespace: { type: 'string', value: 'NS', required: true, help: "the webhook Service's namespace" },
  san: { type: 'string', multiple: true, default: [], value: 'X', help: 'one more SAN, a DNS name or an IP address' },
  'out-dir': { type: 'string', value: 'DIR', help: 'store as files (exactly one of --out-dir and --secret)' },
  secret: { type: 'string', value: 'NAME', help: 'store in-cluster: serving Secret NAME, CA Secret NAME-ca' },
  'ca-secret': { type: 'string', value: 'NAME', help: 'with --secret: the CA Secret, in place of NAME-ca' },
  'webhook-config': {
    type: 'string',
    multiple: true,
    default: [],
    value: '[mutating/|validating/]NAME',
    help: 'inject the CA bundle into the webhook configurations of that name',
  },
  crd: {
    type: 'string',
    multiple: true,
    default: [],
    value: 'NAME',
    help: "inject the CA bundle into that CRD's conversion webhook",
  },
  kubeconfig: { type: 'string', value: 'F', help: 'otherwise in-cluster, then $KUBECONFIG, then ~/.kube/config' },
  watch: { type: 'boolean', default: false, help: 'keep running: renew and re-inject whatever falls due' },
  'check-interval': {
    type: 'string',
    value: formatDuration(DEFAULT_CHECK_INTERVAL_MS),
    help: `with --watch: re-check at least this often, at least 1s (default ${formatDuration(DEFAULT_CHECK_INTERVAL_MS)})`,
  },
  'metrics-port': {
    type: 'string',
    value: 'N',
    help: 'with --watch: serve /metrics and the probes on port N (0: any free port)',
  },
  ...processFlags(),
  'ca-validity-days': {
    type: 'string',
    default: String(DEFAULT_CA_VALIDITY_DAYS),
    value: 'N',
    help: 'lifetime of a new CA',
  },
  'serving-validity-days': {
    type: 'string',
    default: String(DEFAULT_SERVING_VALIDITY_DAYS),
    value: 'N',
    help: 'lifetime of a new serving certificate, at most a third of the CA lifetime',
  },
  'ca-overlap': {
    type: 'string',
    value: 'D',
    help: 'how long an old CA stays in the bundle after a rotation (default: the serving lifetime)',
  },
  'key-algorithm': {
    type: 'string',
    value: KEY_ALGORITHMS.join('|'),
    help: `key type of new certificates (default ${KEY_ALGORITHMS[0]})`,
  },
  'rotate-ca': { type: 'boolean', default: false, help: 'make a new CA now' },
  renew: { type: 'boolean', default: false, help: 'issue a new serving certificate now' },
});

export const usage = usageOf([BOOTSTRAP, APISERVER_CLIENT]);
export const help = helpOf([BOOTSTRAP, APISERVER_CLIENT]);

type BootstrapFlags = ReturnType<typeof BOOTSTRAP.parse>['values'];

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

/**
 * The real clock and API server, loaded on first use so other commands do not pay for them; the
 * cluster connection (kube/connect.ts) is made only when a run talks to a cluster.
 */
async function defaultDeps(): Promise<CertsCommandDeps> {
  const [{ SystemClock }, { connectKubeApi }] = await Promise.all([
    import('../clock/clock.ts'),
    import('../kube/connect.ts'),
  ]);
  // Between --watch passes the sleep may be all that keeps the process alive: its timers stay ref'd.
  const clock = new SystemClock({ unrefTimers: false });
  return {
    clock,
    kubeApi: (kubeconfig) => connectKubeApi(kubeconfig, { clock, requestTimeoutMs: API_REQUEST_TIMEOUT_MS }),
  };
}

/** What the flags ask for, every value read and checked before anything is loaded or touched. */
interface CertsRun {
  config: CertsConfig;
  flags: BootstrapFlags;
  checkIntervalMs: number;
  /** With --watch and a metrics or probe flag: where the status server listens. */
  addresses: ObservabilityAddresses | undefined;
  secureMetrics: boolean;
}

function readFlags(flags: BootstrapFlags): CertsRun {
  if (!flags['out-dir'] === !flags.secret) throw new UsageError('exactly one of --out-dir and --secret is required');
  if (flags['ca-secret'] && !flags.secret) throw new UsageError('--ca-secret needs --secret');
  const served = flags['metrics-port'] ?? flags['metrics-bind-address'] ?? flags['health-probe-bind-address'];
  if (!flags.watch && (flags['check-interval'] !== undefined || served !== undefined)) {
    throw new UsageError(
      '--check-interval, --metrics-port, --metrics-bind-address and --health-probe-bind-address need --watch',
    );
  }
  const keyAlgorithm = flags['key-algorithm'];
  const config = defaultConfig(flags.service, flags.namespace, {
    extraSans: flags.san,
    ...(keyAlgorithm !== undefined && { keyAlgorithm: oneOf('--key-algorithm', keyAlgorithm, KEY_ALGORITHMS) }),
    caValidityDays: positiveInt('--ca-validity-days', flags['ca-validity-days']),
    servingValidityDays: positiveInt('--serving-validity-days', flags['serving-validity-days']),
    ...(flags['ca-overlap'] !== undefined && { caOverlapMs: duration('--ca-overlap', flags['ca-overlap']) }),
    forceCaRotation: flags['rotate-ca'],
    forceServingRenewal: flags.renew,
  });
  if (config.servingValidityDays * 3 > config.caValidityDays) {
    throw new UsageError('--serving-validity-days must be at most a third of --ca-validity-days');
  }
  const interval = flags['check-interval'];
  const metricsPort = flags['metrics-port'];
  const settings = processSettings(flags, {
    port: metricsPort === undefined ? 8080 : listenPort('--metrics-port', metricsPort),
  });
  return {
    config,
    flags,
    checkIntervalMs:
      interval === undefined ? DEFAULT_CHECK_INTERVAL_MS : duration('--check-interval', interval, { min: 1000 }),
    addresses: served === undefined ? undefined : settings.addresses,
    secureMetrics: settings.secureMetrics,
  };
}

/**
 * `staticsite certs bootstrap`: issue, store, inject, and with --watch keep renewing.
 * `staticsite certs apiserver-client`: the API server's client certificate for `webhook --client-ca`.
 */
export async function certsCommand(args: string[], io: CommandIO, injected?: CertsCommandDeps): Promise<number> {
  const [name, rest] = subcommand(args, ['bootstrap', 'apiserver-client']);
  if (name === 'apiserver-client') {
    return (await import('./certs-apiserver-client.ts')).apiServerClientCommand(rest, io);
  }
  const run = readFlags(BOOTSTRAP.parse(rest).values);
  const deps = injected ?? (await defaultDeps());
  const passes = await bootstrapper(run, io, deps);
  if (!run.flags.watch) {
    await passes.once();
    return 0;
  }
  await passes.watch(deps.signal ?? terminationSignal());
  return 0;
}

/** The store, injector, logger and metrics of one run, and the two ways to run passes with them. */
async function bootstrapper(run: CertsRun, io: CommandIO, deps: CertsCommandDeps) {
  const { bootstrap, CertsMetrics, DirectoryStore, KubeBundleInjector, PassStatus, SecretStore, watch } = await import(
    '../certs/index.ts'
  );
  const { createProcessLogger } = await import('../observability/process-logger.ts');
  const { Registry } = await import('prom-client');
  const { config, flags } = run;
  const injects = flags['webhook-config'].length > 0 || flags.crd.length > 0;
  const api = flags.secret || injects ? await deps.kubeApi(flags.kubeconfig) : undefined;
  const store: CertStore = flags.secret
    ? new SecretStore(api as KubeApi, config.namespace, flags.secret, flags['ca-secret'])
    : new DirectoryStore(flags['out-dir'] as string);
  const injector = injects
    ? new KubeBundleInjector(api as KubeApi, { webhookConfigs: flags['webhook-config'], crds: flags.crd })
    : undefined;
  const destination: DestinationStream = { write: (line: string) => io.stdout(line) };
  const logger = createProcessLogger('staticsite-certs', flags['log-level'], { destination });
  const registry = new Registry();
  const bootstrapDeps = {
    store,
    ...(injector && { injector }),
    clock: deps.clock,
    logger,
    metrics: new CertsMetrics(registry),
    ...(deps.generateKey && { generateKey: deps.generateKey }),
  };
  return {
    once: async () => {
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
    },
    /** A first pass with the operator's --rotate-ca/--renew, then the loop without them, until `signal`. */
    watch: async (signal: AbortSignal) => {
      const loopConfig = { ...config, forceCaRotation: false, forceServingRenewal: false };
      let first = true;
      const status = new PassStatus();
      const server = await statusServer(run, { status, registry, logger, api });
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
            checkIntervalMs: run.checkIntervalMs,
            onPass: ({ error }) =>
              error === undefined ? status.succeeded(new Date(deps.clock.now())) : status.failed(error),
          },
        );
      } finally {
        await server?.close();
      }
    },
  };
}

/** With --watch and a metrics or probe flag: /metrics, /healthz, /livez and /readyz (ready after a good pass). */
async function statusServer(
  run: CertsRun,
  parts: {
    status: import('../observability/probes-server.ts').Check;
    registry: import('prom-client').Registry;
    logger: import('pino').Logger;
    api: KubeApi | undefined;
  },
): Promise<{ close(): Promise<void> } | undefined> {
  if (run.addresses === undefined) return undefined;
  const { startObservabilityServers } = await import('../observability/probes-server.ts');
  const { metricsSecurity } = await import('./metrics-security.ts');
  const { status, registry, logger, api } = parts;
  const security = await metricsSecurity(run.secureMetrics, api ? async () => api : undefined, logger);
  const servers = await startObservabilityServers({ ready: [status], registry, logger, security }, run.addresses);
  logger.info(
    { event: 'status-listening', port: servers.metricsPort, probePort: servers.probePort },
    'serving /metrics, /healthz, /livez and /readyz',
  );
  return servers;
}

export { certsCommand as run };
