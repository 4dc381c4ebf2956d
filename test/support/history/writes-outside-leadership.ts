import { SHARD_LEASE_PREFIX } from '../../../api/constants.ts';
import { LEASE_NAME } from '../../../controller/manager.ts';
import { isLeasePath, parseApiPath } from './api-path.ts';
import { type LeadershipWindow, leadershipWindows } from './leadership-windows.ts';
import { isMutating, outcome } from './requests.ts';
import type { History, RecordedRequest, Violation } from './types.ts';

export interface LeadershipExpectation {
  /** Where the election Leases live. */
  leaseNamespace: string;
  /**
   * The Lease a replica must hold for this write: `() => 'staticsite-controller'` for a single leader,
   * `(id) => \`staticsite-shard-${id}\`` for shards; undefined exempts the write.
   */
  leaseFor: (identity: string, request: RecordedRequest) => string | undefined;
  /**
   * The election Leases in leaseNamespace: a replica's own writes to them (campaigning, renewing,
   * releasing) are exempt. Default: staticsite-controller and every staticsite-shard-*.
   */
  electionLeases?: readonly string[] | ((leaseName: string) => boolean);
}

function isDefaultElectionLease(name: string): boolean {
  return name === LEASE_NAME || name.startsWith(SHARD_LEASE_PREFIX);
}

function electionWrite(r: RecordedRequest, expectation: LeadershipExpectation): boolean {
  const path = parseApiPath(r.path);
  if (!isLeasePath(path) || path.namespace !== expectation.leaseNamespace) return false;
  const name = r.leaseName ?? r.name ?? path.name;
  if (name === undefined) return false;
  const election = expectation.electionLeases ?? isDefaultElectionLease;
  return typeof election === 'function' ? election(name) : election.includes(name);
}

function describe(r: RecordedRequest, lease: string, own: LeadershipWindow[]): string {
  const before = own.filter((w) => w.until <= r.at).at(-1);
  const after = own.find((w) => w.from > r.at);
  const where = [
    before
      ? `${r.at - before.until} ms after its window closed at ${before.until} (${before.expired ? 'expired' : before.endedBy ? `taken by ${before.endedBy}` : 'released'})`
      : 'before it first held the lease',
    ...(after ? [`${after.from - r.at} ms before its next window opened at ${after.from}`] : []),
  ];
  return `${r.method} ${r.path} at ${r.at}, ${outcome(r)}: outside its leadership of ${lease}, ${where.join(', ')}`;
}

/**
 * Every mutating request a replica sent while it did not hold its Lease (leadershipWindows), whatever
 * the server answered: a write refused or never answered was still sent, and the fence must stop a
 * write before it leaves.
 */
export function writesOutsideLeadership(history: History, expectation: LeadershipExpectation): Violation[] {
  const windowsOf = new Map<string, LeadershipWindow[]>();
  const windows = (lease: string) => {
    const found = windowsOf.get(lease) ?? leadershipWindows(history, lease, expectation.leaseNamespace);
    windowsOf.set(lease, found);
    return found;
  };
  const violations: Violation[] = [];
  for (const { identity, requests } of history.replicas) {
    for (const r of requests) {
      if (!isMutating(r) || electionWrite(r, expectation)) continue;
      const lease = expectation.leaseFor(identity, r);
      if (lease === undefined) continue;
      const own = windows(lease).filter((w) => w.replica === identity);
      if (own.some((w) => w.from <= r.at && r.at < w.until)) continue;
      violations.push({ rule: 'writesOutsideLeadership', replica: identity, detail: describe(r, lease, own) });
    }
  }
  return violations;
}
