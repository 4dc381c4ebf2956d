import type { BindAddress } from '../observability/bind-address.ts';
import type { ObservabilityAddresses } from '../observability/probes-server.ts';
import { LOG_LEVELS, logLevelProblem } from '../observability/process-logger.ts';
import { address, bool, type Flag } from './flags.ts';
import { UsageError } from './usage.ts';

/** controller-runtime's flags, on every process. */
export const OBSERVABILITY_FLAGS = {
  'metrics-bind-address': {
    type: 'string',
    value: 'HOST:PORT',
    help: 'serve /metrics (and the probes) here; :8080 for every interface, 0 for no metrics server',
  },
  'health-probe-bind-address': {
    type: 'string',
    value: 'HOST:PORT',
    help: 'serve /healthz, /livez and /readyz on a port of their own as well',
  },
  'metrics-secure': {
    type: 'string',
    value: 'true|false',
    help: 'with a cluster, serve /metrics over HTTPS to a bearer allowed get on /metrics (default true)',
  },
} as const satisfies Record<string, Flag>;

/** The flags of every process (webhook, controller, certs): controller-runtime's three and `--log-level`. */
export function processFlags(logLevel = 'info') {
  return {
    ...OBSERVABILITY_FLAGS,
    'log-level': { type: 'string', default: logLevel, value: 'info', help: `one of ${LOG_LEVELS.join(', ')}` },
  } as const satisfies Record<string, Flag>;
}

/** What a process's own flags ask for. */
export interface ProcessSettings {
  logLevel: string;
  secureMetrics: boolean;
  /** Where /metrics and the probes are served (`fallback` without the bind-address flags). */
  addresses: ObservabilityAddresses;
}

/** The values of `processFlags()`, read and checked; `fallback` is the older flags' address. */
export function processSettings(
  values: {
    'log-level': string;
    'metrics-secure'?: string;
    'metrics-bind-address'?: string;
    'health-probe-bind-address'?: string;
  },
  fallback: BindAddress,
): ProcessSettings {
  const problem = logLevelProblem(values['log-level']);
  if (problem) throw new UsageError(problem);
  return {
    logLevel: values['log-level'],
    secureMetrics: metricsSecureFlag(values['metrics-secure']),
    addresses: observabilityAddresses(values, fallback),
  };
}

/**
 * `--metrics-secure`: `true` (the default, as controller-runtime's) or `false`. Secure metrics are
 * served over HTTPS and only to a bearer the API server allows `get` on `/metrics`.
 */
export function metricsSecureFlag(value: string | undefined): boolean {
  return value === undefined || bool('--metrics-secure', value);
}

/**
 * Where the metrics and the probes are served. `--metrics-bind-address HOST:PORT` (or `0`: no
 * metrics server) wins; without it `--metrics-port` and the process's host decide (`fallback`). A
 * host alone in `--metrics-bind-address` is that host on the `--metrics-port`, as the controller's
 * docs have shown it since its first version. `--health-probe-bind-address HOST:PORT` adds a
 * probes-only server; without it the probes stay on the metrics server, so turning that off needs a
 * probe address.
 */
export function observabilityAddresses(
  values: { 'metrics-bind-address'?: string; 'health-probe-bind-address'?: string },
  fallback: BindAddress,
): ObservabilityAddresses {
  const metricsFlag = values['metrics-bind-address'];
  let metrics: BindAddress | 'off';
  if (metricsFlag === undefined) metrics = fallback;
  else if (metricsFlag === '0' || metricsFlag.includes(':') || /^\d+$/.test(metricsFlag)) {
    metrics = address('--metrics-bind-address', metricsFlag);
  } else metrics = { host: metricsFlag, port: fallback.port };
  const probeFlag = values['health-probe-bind-address'];
  const probes = probeFlag === undefined ? undefined : address('--health-probe-bind-address', probeFlag);
  if (metrics === 'off' && (probes === undefined || probes === 'off')) {
    throw new UsageError(
      '--metrics-bind-address 0 turns off the server that answers the probes too: give --health-probe-bind-address',
    );
  }
  return probes !== undefined && probes !== 'off' ? { metrics, probes } : { metrics };
}
