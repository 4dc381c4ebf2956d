import { parseApiPath } from './api-path.ts';
import { isMutating } from './requests.ts';
import type { History, RecordedRequest, ReplicaHistory, Violation } from './types.ts';

/** The kinds of a site's children; each is named after its site. */
const CHILD_RESOURCES = new Set(['configmaps', 'services', 'deployments', 'httproutes', 'ingresses']);

/** A span of one replica's writes to one site: the first and last time the proxy received one. */
export interface SiteWriteSpan {
  replica: string;
  /** `namespace/name`. */
  site: string;
  first: number;
  last: number;
}

export interface SiteWriteOptions {
  /**
   * Moments a site may legitimately have moved back to a replica (say, a paused shard resumed and the
   * ring drained its sites back): each replica's spans are cut there. Default: none, one span per
   * replica and site.
   */
  boundaries?: readonly number[];
}

/** The site whose child or status this request writes: `namespace/name`. */
export function siteWritten(r: RecordedRequest): string | undefined {
  if (!isMutating(r)) return undefined;
  const path = parseApiPath(r.path);
  if (!path?.namespace) return undefined;
  if (path.resource === 'staticsites') {
    return path.subresource === 'status' && path.name ? `${path.namespace}/${path.name}` : undefined;
  }
  if (!CHILD_RESOURCES.has(path.resource) || path.subresource) return undefined;
  const name = path.name ?? r.name;
  return name ? `${path.namespace}/${name}` : undefined;
}

/** The spans of one replica's reconcile writes (children created or updated, status written), per site. */
export function siteWriteSpans(replica: ReplicaHistory, options: SiteWriteOptions = {}): SiteWriteSpan[] {
  const boundaries = [...(options.boundaries ?? [])].sort((a, b) => a - b);
  const epochOf = (at: number) => boundaries.filter((b) => b <= at).length;
  const spans = new Map<string, SiteWriteSpan>();
  for (const r of replica.requests) {
    const site = siteWritten(r);
    if (!site) continue;
    const key = `${site} ${epochOf(r.at)}`;
    const span = spans.get(key);
    if (span) {
      span.first = Math.min(span.first, r.at);
      span.last = Math.max(span.last, r.at);
    } else {
      spans.set(key, { replica: replica.identity, site, first: r.at, last: r.at });
    }
  }
  return [...spans.values()];
}

/** No two replicas wrote one site's children or status in overlapping spans of time. */
export function overlappingSiteWrites(history: History, options: SiteWriteOptions = {}): Violation[] {
  const bySite = new Map<string, SiteWriteSpan[]>();
  for (const replica of history.replicas) {
    for (const span of siteWriteSpans(replica, options))
      bySite.set(span.site, [...(bySite.get(span.site) ?? []), span]);
  }
  const violations: Violation[] = [];
  for (const [site, spans] of bySite) {
    for (const [i, x] of spans.entries()) {
      for (const y of spans.slice(i + 1)) {
        if (x.replica === y.replica || x.first > y.last || y.first > x.last) continue;
        violations.push({
          rule: 'overlappingSiteWrites',
          detail: `${site}: ${x.replica} wrote it from ${x.first} to ${x.last} and ${y.replica} from ${y.first} to ${y.last}`,
        });
      }
    }
  }
  return violations;
}
