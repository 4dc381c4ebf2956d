/** A StaticSite that holds a hostname. */
export interface SiteRef {
  namespace: string;
  name: string;
}

/** Which sites hold which hostname, read from a watch-backed cache (never a LIST per request). */
export interface HostnameIndex {
  holders(hostname: string): readonly SiteRef[];
  /** The cache has listed once and is watching. */
  readonly synced: boolean;
}

/**
 * An index kept in memory, updated by an informer's add/update/delete events; a relist needs nothing
 * more, since the informer reports it as those events (a site gone in the gap as a delete).
 */
export class MemoryHostnameIndex implements HostnameIndex {
  private readonly byHostname = new Map<string, Map<string, SiteRef>>();
  private readonly bySite = new Map<string, string>();
  synced = false;

  private static key(ref: SiteRef): string {
    return `${ref.namespace}/${ref.name}`;
  }

  /** Records that `ref` now holds `hostname` (undefined: holds none). */
  set(ref: SiteRef, hostname: string | undefined): void {
    const key = MemoryHostnameIndex.key(ref);
    const previous = this.bySite.get(key);
    if (previous === hostname) return;
    if (previous !== undefined) {
      const holders = this.byHostname.get(previous);
      holders?.delete(key);
      if (holders?.size === 0) this.byHostname.delete(previous);
    }
    if (hostname === undefined) {
      this.bySite.delete(key);
      return;
    }
    this.bySite.set(key, hostname);
    let holders = this.byHostname.get(hostname);
    if (!holders) {
      holders = new Map();
      this.byHostname.set(hostname, holders);
    }
    holders.set(key, { namespace: ref.namespace, name: ref.name });
  }

  delete(ref: SiteRef): void {
    this.set(ref, undefined);
  }

  holders(hostname: string): readonly SiteRef[] {
    return [...(this.byHostname.get(hostname)?.values() ?? [])];
  }
}
