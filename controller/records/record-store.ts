import { isIPv4, isIPv6 } from 'node:net';

/**
 * An address the site is served at: one of a Gateway's `status.addresses` or of an Ingress's
 * `status.loadBalancer.ingress`, an `IPAddress` or a `Hostname` (other, implementation-specific
 * types are ignored).
 */
export interface ServingAddress {
  type: string;
  value: string;
}

/** What serves the site by its hostname: a Gateway (`namespace/name`) or the site's Ingress, with its addresses. */
export interface ServedVia {
  kind: 'Gateway' | 'Ingress';
  name: string;
  addresses: ServingAddress[];
}

const ADDRESS_FIELD: Record<ServedVia['kind'], string> = {
  Gateway: 'status.addresses',
  Ingress: 'status.loadBalancer.ingress',
};

/** What the outside world learns about a site: its DNS name and what serves it. */
export interface ExternalRecord {
  hostname: string;
  /** The in-cluster DNS name of the site's Service. */
  service: string;
  port: number;
  /** namespace/name of the StaticSite. */
  site: string;
  /**
   * With `--gateway` or `--ingress-class`: the Gateway or Ingress that serves the hostname, and its
   * addresses. The name then points there, not at the Service.
   */
  via?: ServedVia;
}

export type RecordType = 'A' | 'AAAA' | 'CNAME';

/** The records of one type the hostname answers with, values sorted. */
export interface RecordSet {
  type: RecordType;
  values: string[];
}

/**
 * What the hostname's DNS answers, as ExternalDNS derives it from a route's Gateway or an Ingress: its
 * IPv4 and IPv6 addresses (A, AAAA); with hostnames only, a CNAME to the first; served by neither,
 * a CNAME to the Service's cluster DNS name. Throws when there is no address of either kind.
 */
export function recordSets(record: ExternalRecord): RecordSet[] {
  const via = record.via;
  if (!via) return [{ type: 'CNAME', values: [record.service] }];
  const values = (type: string, keep: (v: string) => boolean) => [
    ...new Set(via.addresses.filter((a) => a.type === type && keep(a.value)).map((a) => a.value)),
  ];
  const v4 = values('IPAddress', isIPv4).sort();
  const v6 = values('IPAddress', isIPv6).sort();
  const sets: RecordSet[] = [];
  if (v4.length > 0) sets.push({ type: 'A', values: v4 });
  if (v6.length > 0) sets.push({ type: 'AAAA', values: v6 });
  if (sets.length > 0) return sets;
  const hostname = values('Hostname', (v) => v.length > 0)[0];
  if (hostname) return [{ type: 'CNAME', values: [hostname] }];
  throw new Error(`${via.kind} ${via.name} has no IP address or hostname in ${ADDRESS_FIELD[via.kind]}`);
}

/** What the hostname points at, for Events and logs: `192.0.2.1, 2001:db8::1 (Gateway ns/name)`. */
export function describeTarget(record: ExternalRecord): string {
  const values = recordSets(record)
    .flatMap((set) => set.values)
    .join(', ');
  return record.via ? `${values} (${record.via.kind} ${record.via.name})` : values;
}

export type PublishOutcome = 'created' | 'updated' | 'unchanged';
export type RemoveOutcome = 'removed' | 'absent';

/**
 * Where external records live: one record per site, keyed by namespace/name. The file store is one
 * implementation; a DNS provider is another. Both operations are idempotent.
 */
export interface RecordStore {
  publish(siteKey: string, record: ExternalRecord): Promise<PublishOutcome>;
  /** Deletes the record; a record that is already gone is success ('absent'). */
  remove(siteKey: string): Promise<RemoveOutcome>;
}
