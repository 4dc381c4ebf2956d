import { AsyncLocalStorage } from 'node:async_hooks';
import { parseArgs } from 'node:util';
import { EXCLUDED_NAMESPACES } from '../api/index.ts';
import { parseDuration } from '../controller/duration.ts';
import type { ControllerProcessOptions } from '../controller/process.ts';
import { DEFAULT_SITE_IMAGE, DEFAULT_SITE_PORT } from '../controller/reconcile/children.ts';
import { parseRecordsFlag, type RecordsConfig } from '../controller/records/records-config.ts';
import { type LogContext, logLevelProblem } from '../kube/process-logger.ts';
import {
  metricsSecureFlag,
  OBSERVABILITY_OPTIONS,
  OBSERVABILITY_USAGE,
  observabilityAddresses,
} from './observability-flags.ts';
import { type CommandIO, UsageError } from './usage.ts';

export const controllerUsage = `staticsite controller [--kubeconfig F] [--namespace NS] [--exclude-namespaces NS,...] [--claims-namespace NS] [--create-claims-namespace] [--records dir:DIR|dns:HOST:PORT --dns-zone Z --dns-tsig-key-file F [--dns-owner-id ID]] [--records-dir DIR] [--workers N] [--leader-elect] [--metrics-port 8081] ${OBSERVABILITY_USAGE} [--site-image IMAGE] [--site-port 8080] [--log-level info]`;

/** `--exclude-namespaces a,b`: a comma-separated list; an empty value excludes nothing. */
export function namespaceList(value: string): string[] {
  const names = value
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  for (const n of names) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n) || n.length > 63) {
      throw new UsageError(`--exclude-namespaces: "${n}" is not a namespace name (a DNS-1123 label)`);
    }
  }
  return names;
}

function positiveInt(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a non-negative integer, got "${value}"`);
  return n;
}

function port(name: string, value: string): number {
  const n = positiveInt(name, value);
  if (n < 1 || n > 65535) throw new UsageError(`--${name} must be a port (1-65535), got "${value}"`);
  return n;
}

function siteImage(siteImageFlag: string | undefined, imageFlag: string | undefined): string {
  if (siteImageFlag !== undefined && imageFlag !== undefined) {
    throw new UsageError('--image is the old spelling of --site-image: give one of them');
  }
  return siteImageFlag ?? imageFlag ?? DEFAULT_SITE_IMAGE;
}

function duration(name: string, value: string): number {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new UsageError(`--${name}: ${(error as Error).message}`);
  }
}

/** `--records`, or the older `--records-dir`; a bad combination is a usage error. */
function recordsConfig(values: {
  records?: string;
  'records-dir': string;
  'dns-zone'?: string;
  'dns-tsig-key-file'?: string;
  'dns-owner-id': string;
}): RecordsConfig {
  if (values.records === undefined) return { kind: 'dir', dir: values['records-dir'] };
  try {
    return parseRecordsFlag(values.records, {
      zone: values['dns-zone'],
      tsigKeyFile: values['dns-tsig-key-file'],
      owner: values['dns-owner-id'],
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * `staticsite controller`: runs the StaticSite controller until SIGTERM/SIGINT (exit 0 after a
 * graceful shutdown) or until leadership is lost (exit 1, so the pod restarts as a candidate).
 */
export async function controllerCommand(args: string[], io: CommandIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      kubeconfig: { type: 'string' },
      namespace: { type: 'string', default: '' },
      'exclude-namespaces': { type: 'string', default: EXCLUDED_NAMESPACES.join(',') },
      'claims-namespace': { type: 'string' },
      'create-claims-namespace': { type: 'boolean', default: false },
      records: { type: 'string' },
      'records-dir': { type: 'string', default: '/var/lib/staticsite/records' },
      'dns-zone': { type: 'string' },
      'dns-tsig-key-file': { type: 'string' },
      'dns-owner-id': { type: 'string', default: 'staticsite-operator' },
      workers: { type: 'string', default: '4' },
      'leader-elect': { type: 'boolean', default: false },
      'leader-elect-namespace': { type: 'string' },
      'leader-elect-lease-duration': { type: 'string', default: '15s' },
      'leader-elect-renew-deadline': { type: 'string', default: '10s' },
      'leader-elect-retry-period': { type: 'string', default: '2s' },
      'metrics-port': { type: 'string', default: '8081' },
      ...OBSERVABILITY_OPTIONS,
      'base-domain': { type: 'string', default: 'sites.staticsite.dev' },
      'site-image': { type: 'string' },
      'site-port': { type: 'string', default: String(DEFAULT_SITE_PORT) },
      /** Deprecated spelling of --site-image. */
      image: { type: 'string' },
      'resync-period': { type: 'string', default: '10m' },
      'kube-api-qps': { type: 'string', default: '50' },
      'kube-api-burst': { type: 'string', default: '100' },
      'shutdown-grace': { type: 'string', default: '10s' },
      'watch-down-threshold': { type: 'string', default: '30s' },
      identity: { type: 'string' },
      'log-level': { type: 'string', default: process.env.LOG_LEVEL ?? 'info' },
    },
    strict: true,
    allowPositionals: false,
  });
  const levelProblem = logLevelProblem(values['log-level']);
  if (levelProblem) throw new UsageError(levelProblem);
  const options: ControllerProcessOptions = {
    kubeconfig: values.kubeconfig,
    namespace: values.namespace,
    excludeNamespaces: namespaceList(values['exclude-namespaces']),
    claimsNamespace: values['claims-namespace'],
    createClaimsNamespace: values['create-claims-namespace'],
    records: recordsConfig(values),
    workers: Math.max(1, positiveInt('workers', values.workers)),
    leaderElect: values['leader-elect'],
    leaderElectNamespace: values['leader-elect-namespace'],
    leaseDurationMs: duration('leader-elect-lease-duration', values['leader-elect-lease-duration']),
    renewDeadlineMs: duration('leader-elect-renew-deadline', values['leader-elect-renew-deadline']),
    retryPeriodMs: duration('leader-elect-retry-period', values['leader-elect-retry-period']),
    observability: observabilityAddresses(values, {
      host: '0.0.0.0',
      port: positiveInt('metrics-port', values['metrics-port']),
    }),
    baseDomain: values['base-domain'],
    image: siteImage(values['site-image'], values.image),
    sitePort: port('site-port', values['site-port']),
    resyncPeriodMs: duration('resync-period', values['resync-period']),
    qps: positiveInt('kube-api-qps', values['kube-api-qps']),
    burst: positiveInt('kube-api-burst', values['kube-api-burst']),
    shutdownGraceMs: duration('shutdown-grace', values['shutdown-grace']),
    watchDownThresholdMs: duration('watch-down-threshold', values['watch-down-threshold']),
    identity: values.identity,
  };
  const secureMetrics = metricsSecureFlag(values['metrics-secure']);
  // Loaded only now: the client library and the controller cost seconds to import, which every
  // other `staticsite` command should not pay.
  const { createLogger } = await import('../controller/observability/logger.ts');
  const { startController } = await import('../controller/process.ts');
  const logContext: LogContext = new AsyncLocalStorage();
  const logger = createLogger(values['log-level'], logContext);
  if (secureMetrics) {
    const { securedBy } = await import('./metrics-security.ts');
    options.metricsSecurity = (api) => securedBy(api, logger);
  }
  const running = await startController(options, logger, logContext);
  const onSignal = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    running.stop();
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
  const end = await running.done;
  if (end === 'leadership-lost') {
    io.stderr('staticsite controller: leadership lost\n');
    return 1;
  }
  return 0;
}
