import { type BindAddress, bindAddressProblem, parseBindAddress } from '../kube/bind-address.ts';
import type { ObservabilityAddresses } from '../kube/probes-server.ts';
import { UsageError } from './usage.ts';

/** controller-runtime's two flags, on every process. */
export const OBSERVABILITY_OPTIONS = {
  'metrics-bind-address': { type: 'string' },
  'health-probe-bind-address': { type: 'string' },
  'metrics-secure': { type: 'string' },
} as const;

/**
 * `--metrics-secure`: `true` (the default, as controller-runtime's) or `false`. Secure metrics are
 * served over HTTPS and only to a bearer the API server allows `get` on `/metrics`.
 */
export function metricsSecureFlag(value: string | undefined): boolean {
  if (value === undefined || value === 'true') return true;
  if (value === 'false') return false;
  throw new UsageError(`--metrics-secure must be true or false, got "${value}"`);
}

export const OBSERVABILITY_USAGE =
  '[--metrics-bind-address HOST:PORT] [--health-probe-bind-address HOST:PORT] [--metrics-secure true|false]';

/**
 * Where the metrics and the probes are served. `--metrics-bind-address HOST:PORT` (or `0`: no
 * metrics server) wins; without it the older flags still decide: `--metrics-port` and the
 * process's host (a host alone in `--metrics-bind-address`, as the controller once took it, is
 * such a host). `--health-probe-bind-address HOST:PORT` adds a probes-only server; without it the
 * probes stay on the metrics server, so turning that off needs a probe address.
 */
export function observabilityAddresses(
  values: { 'metrics-bind-address'?: string; 'health-probe-bind-address'?: string },
  legacy: BindAddress,
): ObservabilityAddresses {
  const metricsFlag = values['metrics-bind-address'];
  let metrics: BindAddress | 'off';
  if (metricsFlag === undefined) metrics = legacy;
  else if (metricsFlag === '0' || metricsFlag.includes(':') || /^\d+$/.test(metricsFlag)) {
    const parsed = parseBindAddress(metricsFlag);
    if (parsed === undefined) throw new UsageError(bindAddressProblem('--metrics-bind-address', metricsFlag));
    metrics = parsed;
  } else metrics = { host: metricsFlag, port: legacy.port };
  const probeFlag = values['health-probe-bind-address'];
  let probes: BindAddress | undefined;
  if (probeFlag !== undefined && probeFlag !== '0') {
    const parsed = parseBindAddress(probeFlag);
    if (parsed === undefined || parsed === 'off') {
      throw new UsageError(bindAddressProblem('--health-probe-bind-address', probeFlag));
    }
    probes = parsed;
  }
  if (metrics === 'off' && !probes) {
    throw new UsageError(
      '--metrics-bind-address 0 turns off the server that answers the probes too: give --health-probe-bind-address',
    );
  }
  return probes ? { metrics, probes } : { metrics };
}
