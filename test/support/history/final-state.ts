import { FINALIZER } from '../../../api/constants.ts';
import { type FinalSite, type FinalState, siteKeyOf, type Violation } from './types.ts';

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

/**
 * The record store matches the sites: every live site with our finalizer has exactly one record, with
 * its hostname (none: lost; a record with another hostname: stale), and no record names a site that
 * no longer exists (an orphan: its deletion did not clean up).
 */
export function recordsConsistent(final: FinalState): Violation[] {
  const violations: Violation[] = [];
  const add = (detail: string) => violations.push({ rule: 'recordsConsistent', detail });
  const bySite = groupBy(final.records, (r) => r.siteKey);
  const existing = new Set(final.sites.map(siteKeyOf));
  for (const site of final.sites) {
    if (site.deletionTimestamp !== undefined || !site.finalizers.includes(FINALIZER)) continue;
    const key = siteKeyOf(site);
    const records = bySite.get(key) ?? [];
    const matching = records.filter((r) => r.hostname === site.hostname);
    if (matching.length === 0) add(`lost: ${key} has no record for ${site.hostname}`);
    if (matching.length > 1) add(`duplicate: ${key} has ${matching.length} records for ${site.hostname}`);
    for (const r of records.filter((r) => r.hostname !== site.hostname)) {
      add(`stale: ${key} has a record for ${r.hostname}, its hostname is ${site.hostname}`);
    }
  }
  for (const r of final.records.filter((r) => !existing.has(r.siteKey))) {
    add(`orphan: a record for ${r.hostname} names ${r.siteKey}, which no longer exists`);
  }
  return violations;
}

/** Every site the test deleted is gone: none hangs on its finalizer. */
export function noStuckFinalizers(final: FinalState): Violation[] {
  const sites = new Map(final.sites.map((s) => [siteKeyOf(s), s]));
  return final.deletedSites.flatMap((key) => {
    const site = sites.get(key);
    if (!site) return [];
    const state = site.deletionTimestamp ? `deleting since ${site.deletionTimestamp}` : 'not even deleting';
    return [
      {
        rule: 'noStuckFinalizers' as const,
        detail: `${key} was deleted but still exists (${state}, finalizers [${site.finalizers.join(', ')}])`,
      },
    ];
  });
}

/** No two sites, and no two records, share a hostname. */
export function hostnamesUnique(final: FinalState): Violation[] {
  const shared = <T>(items: readonly T[], hostname: (item: T) => string, what: string, key: (item: T) => string) =>
    [...groupBy(items, hostname)]
      .filter(([host, group]) => host !== '' && group.length > 1)
      .map(([host, group]) => ({
        rule: 'hostnamesUnique' as const,
        detail: `${what} share ${host}: ${group.map(key).join(', ')}`,
      }));
  return [
    ...shared(final.sites, (s) => s.hostname, 'sites', siteKeyOf),
    ...shared(
      final.records,
      (r) => r.hostname,
      'records',
      (r) => `record of ${r.siteKey}`,
    ),
  ];
}

function isConverged(site: FinalSite): boolean {
  return site.readyStatus === 'True' && site.readyObservedGeneration === site.generation;
}

/** Every live site's Ready condition is True for its current generation. */
export function converged(final: FinalState): Violation[] {
  return final.sites
    .filter((s) => s.deletionTimestamp === undefined && !isConverged(s))
    .map((s) => ({
      rule: 'converged' as const,
      detail: `${siteKeyOf(s)} at generation ${s.generation}: Ready ${s.readyStatus ?? 'absent'} at observedGeneration ${s.readyObservedGeneration ?? 'none'}`,
    }));
}
