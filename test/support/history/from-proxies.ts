import type { ApiProxy } from '../controller-api-proxy.ts';
import type { History, RecordedRequest } from './types.ts';

type Recorder = Pick<ApiProxy, 'requests'>;

/**
 * A snapshot of what each replica's proxy recorded, keyed by the replica's identity (the holderIdentity
 * it writes into Leases). Take it after the proxies stopped, or it misses answers still on the way.
 */
export function historyFromProxies(
  proxies: ReadonlyMap<string, Recorder> | Readonly<Record<string, Recorder>>,
): History {
  const entries: Array<[string, Recorder]> =
    proxies instanceof Map
      ? [...(proxies as ReadonlyMap<string, Recorder>)]
      : Object.entries(proxies as Readonly<Record<string, Recorder>>);
  return {
    replicas: entries.map(([identity, proxy]) => ({
      identity,
      requests: proxy.requests.map(
        (r): RecordedRequest => ({
          method: r.method,
          path: r.path,
          status: r.status,
          at: r.at,
          watch: r.watch,
          dryRun: r.query.has('dryRun'),
          ...(r.answeredAt !== undefined && { answeredAt: r.answeredAt }),
          ...(r.name !== undefined && { name: r.name }),
          ...(r.holder !== undefined && { holder: r.holder }),
          ...(r.leaseName !== undefined && { leaseName: r.leaseName }),
          ...(r.leaseDurationSeconds !== undefined && { leaseDurationSeconds: r.leaseDurationSeconds }),
        }),
      ),
    })),
  };
}
