import { AsyncLocalStorage } from 'node:async_hooks';
import { hostname } from 'node:os';
import { DEFAULT_BASE_DOMAIN, EXCLUDED_NAMESPACES, SHARD_LEASE_PREFIX } from '../api/index.ts';
import type { ControllerProcessOptions } from '../controller/process.ts';
import { DEFAULT_SITE_IMAGE, DEFAULT_SITE_PORT } from '../controller/reconcile/children.ts';
import { type GatewayRef, parseGatewayRef } from '../controller/reconcile/route.ts';
import { parseRecordsFlag, type RecordsConfig } from '../controller/records/records-config.ts';
import type { LogContext } from '../observability/process-logger.ts';
import { CommandLine, duration, list, listenPort, nonNegativeInt, port, positiveInt } from './flags.ts';
import { processFlags, processSettings } from './observability-flags.ts';
import { type CommandIO, UsageError } from './usage.ts';

const CONTROLLER = new CommandLine('controller', {
  kubeconfig: { type: 'string', value: 'F', help: 'otherwise in-cluster, then $KUBECONFIG, then ~/.kube/config' },
  namespace: {
    type: 'string',
    default: '',
    value: 'NS',
    help: 'watch and reconcile only this namespace (default all)',
  },
  'exclude-namespaces': {
    type: 'string',
    default: EXCLUDED_NAMESPACES.join(','),
    value: 'NS,...',
    help: 'StaticSites in these namespaces are left alone; an empty value excludes nothing',
  },
  'claims-namespace': { type: 'string', value: 'NS', help: "where the hostname claims live (default: the Lease's)" },
  'create-claims-namespace': {
    type: 'boolean',
    default: false,
    help: 'create the claims namespace when it is missing',
  },
  records: {
    type: 'string',
    value: 'dir:DIR|dns:HOST:PORT',
    help: 'where the external records go: a directory, or a DNS server by RFC 2136 (default dir:--records-dir)',
  },
  'dns-zone': { type: 'string', value: 'Z', help: 'with --records dns:…: the zone the records go in' },
  'dns-tsig-key-file': { type: 'string', value: 'F', help: 'with --records dns:…: the TSIG key, a BIND key file' },
  'dns-owner-id': {
    type: 'string',
    default: 'staticsite-operator',
    value: 'ID',
    help: 'with --records dns:…: the owner in the ownership records',
  },
  'records-dir': {
    type: 'string',
    default: '/var/lib/staticsite/records',
    value: 'DIR',
    help: 'the directory of the records without --records',
  },
  workers: { type: 'string', default: '4', value: 'N', help: 'concurrent reconciles, at least 1' },
  'leader-elect': { type: 'boolean', default: false, help: 'take part in leader election on a Lease' },
  'leader-elect-namespace': { type: 'string', value: 'NS', help: "the Lease's namespace", detail: true },
  'leader-elect-lease-duration': { type: 'string', default: '15s', help: 'client-go LeaseDuration', detail: true },
  'leader-elect-renew-deadline': { type: 'string', default: '10s', help: 'client-go RenewDeadline', detail: true },
  'leader-elect-retry-period': { type: 'string', default: '2s', help: 'client-go RetryPeriod', detail: true },
  'metrics-port': {
    type: 'string',
    default: '8081',
    help: 'serve /metrics and the probes on this port, every interface',
  },
  ...processFlags(process.env.LOG_LEVEL ?? 'info'),
  'base-domain': {
    type: 'string',
    default: DEFAULT_BASE_DOMAIN,
    value: 'D',
    help: 'hostname of a site whose spec has none: NAME.NAMESPACE.D',
    detail: true,
  },
  'site-image': { type: 'string', default: DEFAULT_SITE_IMAGE, value: 'IMAGE', help: 'the serving container' },
  'site-port': {
    type: 'string',
    default: String(DEFAULT_SITE_PORT),
    help: 'the port the serving container listens on',
  },
  'resync-period': { type: 'string', default: '10m', help: 'reconcile every site again this often', detail: true },
  'kube-api-qps': {
    type: 'string',
    default: '50',
    help: 'client-side throttle of reconcile requests, 0 for none',
    detail: true,
  },
  'kube-api-burst': {
    type: 'string',
    default: '100',
    help: 'requests the throttle lets through at once',
    detail: true,
  },
  'shutdown-grace': {
    type: 'string',
    default: '10s',
    help: 'how long SIGTERM waits for in-flight reconciles',
    detail: true,
  },
  'watch-down-threshold': {
    type: 'string',
    default: '30s',
    help: '/readyz fails when a watch has been down longer',
    detail: true,
  },
  identity: { type: 'string', value: 'ID', help: 'leader-election identity (default HOSTNAME_UUID)', detail: true },
  gateway: {
    type: 'string',
    value: 'NAMESPACE/NAME',
    help: 'an HTTPRoute per site to this Gateway (Gateway API); a site is Ready, with its URL, once the Gateway accepts the route',
  },
  'gateway-section': {
    type: 'string',
    value: 'NAME',
    help: "the Gateway's listener (sectionName) the routes attach to; default every listener",
    detail: true,
  },
  'ingress-class': {
    type: 'string',
    value: 'NAME',
    help: 'instead of --gateway: an Ingress per site of this IngressClass; a site is Ready, with its URL, once its ingress controller reports an address',
  },
  sharded: {
    type: 'boolean',
    default: false,
    help: 'one shard of several replicas: a Lease per replica, each reconciles only its sites (implies --leader-elect: the leader moves sites between shards)',
  },
  'shard-name': {
    type: 'string',
    value: 'NAME',
    help: "with --sharded: this replica's shard (default $POD_NAME, else the host name)",
    detail: true,
  },
});

export const usage = CONTROLLER.synopsis();
export const help = CONTROLLER.help();

type ControllerFlags = ReturnType<typeof CONTROLLER.parse>['values'];

/** `--exclude-namespaces a,b`: a comma-separated list; an empty value excludes nothing. */
export function namespaceList(value: string): string[] {
  const names = list(value);
  for (const n of names) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n) || n.length > 63) {
      throw new UsageError(`--exclude-namespaces: "${n}" is not a namespace name (a DNS-1123 label)`);
    }
  }
  return names;
}

/** `--records`, or without it `--records-dir`; a bad combination is a usage error. */
function recordsConfig(flags: ControllerFlags): RecordsConfig {
  if (flags.records === undefined) return { kind: 'dir', dir: flags['records-dir'] };
  try {
    return parseRecordsFlag(flags.records, {
      zone: flags['dns-zone'],
      tsigKeyFile: flags['dns-tsig-key-file'],
      owner: flags['dns-owner-id'],
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The controller's options from its flags, every value read and checked. */
function controllerOptions(flags: ControllerFlags): ControllerProcessOptions & { secureMetrics: boolean } {
  const settings = processSettings(flags, {
    host: '0.0.0.0',
    port: listenPort('--metrics-port', flags['metrics-port']),
  });
  return {
    secureMetrics: settings.secureMetrics,
    kubeconfig: flags.kubeconfig,
    namespace: flags.namespace,
    excludeNamespaces: namespaceList(flags['exclude-namespaces']),
    claimsNamespace: flags['claims-namespace'],
    createClaimsNamespace: flags['create-claims-namespace'],
    records: recordsConfig(flags),
    workers: positiveInt('--workers', flags.workers),
    leaderElect: flags['leader-elect'],
    leaderElectNamespace: flags['leader-elect-namespace'],
    leaseDurationMs: duration('--leader-elect-lease-duration', flags['leader-elect-lease-duration']),
    renewDeadlineMs: duration('--leader-elect-renew-deadline', flags['leader-elect-renew-deadline']),
    retryPeriodMs: duration('--leader-elect-retry-period', flags['leader-elect-retry-period']),
    observability: settings.addresses,
    baseDomain: flags['base-domain'],
    image: flags['site-image'],
    sitePort: port('--site-port', flags['site-port']),
    resyncPeriodMs: duration('--resync-period', flags['resync-period']),
    qps: nonNegativeInt('--kube-api-qps', flags['kube-api-qps']),
    burst: nonNegativeInt('--kube-api-burst', flags['kube-api-burst']),
    shutdownGraceMs: duration('--shutdown-grace', flags['shutdown-grace']),
    watchDownThresholdMs: duration('--watch-down-threshold', flags['watch-down-threshold']),
    identity: flags.identity,
    ...exposureOptions(flags),
    shard: shardName(flags),
  };
}

/** `--sharded` and `--shard-name`: the shard's name is a label value and part of its Lease's name. */
function shardName(flags: ControllerFlags): string | undefined {
  const named = flags['shard-name'];
  if (!flags.sharded) {
    if (named !== undefined) throw new UsageError('--shard-name needs --sharded');
    return undefined;
  }
  const name = named ?? process.env.POD_NAME ?? hostname();
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 63 - SHARD_LEASE_PREFIX.length) {
    throw new UsageError(
      `--shard-name: "${name}" is not a shard name (lower-case letters, digits and '-', at most ${63 - SHARD_LEASE_PREFIX.length} characters)`,
    );
  }
  return name;
}

/**
 * `--gateway NAMESPACE/NAME` and `--gateway-section NAME`, or `--ingress-class NAME`: a site is exposed
 * one way. The section alone, or both ways, is a usage error.
 */
function exposureOptions(flags: ControllerFlags): { gateway?: GatewayRef; ingressClass?: string } {
  const ingressClass = flags['ingress-class'];
  if (ingressClass !== undefined) {
    if (flags.gateway !== undefined) {
      throw new UsageError('--gateway and --ingress-class exclude each other: a site is exposed through one of them');
    }
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(ingressClass) || ingressClass.length > 253) {
      throw new UsageError(`--ingress-class: "${ingressClass}" is not an IngressClass name (a DNS-1123 subdomain)`);
    }
  }
  if (flags.gateway === undefined) {
    if (flags['gateway-section'] !== undefined) throw new UsageError('--gateway-section needs --gateway');
    return ingressClass === undefined ? {} : { ingressClass };
  }
  try {
    return { gateway: parseGatewayRef(flags.gateway, flags['gateway-section']) };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * `staticsite controller`: runs the StaticSite controller until SIGTERM/SIGINT (exit 0 after a
 * graceful shutdown) or until leadership is lost (exit 1, so the pod restarts as a candidate).
 */
export async function controllerCommand(args: string[], io: CommandIO): Promise<number> {
  const flags = CONTROLLER.parse(args).values;
  const { secureMetrics, ...options } = controllerOptions(flags);
  // Loaded only now: the client library and the controller cost seconds to import, which every
  // other `staticsite` command should not pay.
  const { createLogger } = await import('../controller/observability/logger.ts');
  const { startController } = await import('../controller/process.ts');
  const logContext: LogContext = new AsyncLocalStorage();
  const logger = createLogger(flags['log-level'], logContext);
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

export { controllerCommand as run };
