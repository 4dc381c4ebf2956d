import { isLeasePath, parseApiPath } from './api-path.ts';
import { isAccepted } from './requests.ts';
import type { History, RecordedRequest } from './types.ts';

/** A span during which the API server had `replica` as the Lease's holder: [from, until). */
export interface LeadershipWindow {
  replica: string;
  /** When the accepted acquire was answered (its `at` when no answer time is known). */
  from: number;
  /** When the proxy received the accepted write that named another holder; Infinity while held. */
  until: number;
  /** The holder that write named ('' for a release); absent while held. */
  endedBy?: string;
  /** It ended because its holder's last accepted renewal was a lease duration old. */
  expired?: boolean;
}

interface HolderChange {
  holder: string;
  at: number;
  answeredAt: number;
  /** The lease duration the write set (ms); absent when the record does not say. */
  durationMs?: number;
}

/** The Lease this request wrote, if it wrote `namespace/name` and says which holder it set. */
function holderWritten(r: RecordedRequest, name: string, namespace: string): string | undefined {
  if (!isAccepted(r)) return undefined;
  const path = parseApiPath(r.path);
  if (!isLeasePath(path) || path.namespace !== namespace || (r.leaseName ?? r.name ?? path.name) !== name) {
    return undefined;
  }
  return r.method === 'DELETE' ? '' : r.holder;
}

/** The accepted writes of the Lease, in the order the proxies received them. */
function holderChanges(history: History, name: string, namespace: string): HolderChange[] {
  const changes: HolderChange[] = [];
  for (const replica of history.replicas) {
    for (const r of replica.requests) {
      const holder = holderWritten(r, name, namespace);
      if (holder === undefined) continue;
      const durationMs = r.leaseDurationSeconds === undefined ? undefined : r.leaseDurationSeconds * 1000;
      changes.push({
        holder,
        at: r.at,
        answeredAt: r.answeredAt ?? r.at,
        ...(durationMs !== undefined && { durationMs }),
      });
    }
  }
  return changes.sort((a, b) => a.at - b.at || a.answeredAt - b.answeredAt);
}

/**
 * Who held the Lease when, as the API server saw it, from the Lease writes it accepted (2xx). Lease
 * updates carry a resourceVersion, so accepted writes are serialised and their receive order is the
 * server's order. The windows are as narrow as the record allows: one opens when the acquire was
 * answered (the replica cannot know it leads before that) and closes at the first of:
 * - the proxy receiving the write that named another holder or released it (the server may have
 *   applied it any time after that);
 * - the lease expiring: a lease duration after the proxy received the holder's last accepted write
 *   (acquire or renewal), for another candidate may take over from then on. A renewal accepted after
 *   that opens a new window.
 * So a write the old holder sent at or after that moment is outside.
 */
export function leadershipWindows(history: History, leaseName: string, leaseNamespace: string): LeadershipWindow[] {
  const windows: LeadershipWindow[] = [];
  let open: LeadershipWindow | undefined;
  let expiresAt = Infinity;
  const close = (at: number, endedBy: string) => {
    if (!open) return;
    if (expiresAt <= at) {
      open.until = expiresAt;
      open.expired = true;
    } else {
      open.until = at;
      open.endedBy = endedBy;
    }
    open = undefined;
  };
  for (const change of holderChanges(history, leaseName, leaseNamespace)) {
    if (open && change.holder === open.replica && change.at < expiresAt) {
      expiresAt = change.durationMs === undefined ? Infinity : change.at + change.durationMs;
      continue;
    }
    close(change.at, change.holder);
    if (change.holder === '') continue;
    open = { replica: change.holder, from: change.answeredAt, until: Infinity };
    expiresAt = change.durationMs === undefined ? Infinity : change.at + change.durationMs;
    windows.push(open);
  }
  if (open && expiresAt !== Infinity) {
    // Still held when the record ends, unless it expired: then nobody renewed it in time.
    open.until = expiresAt;
    open.expired = true;
  }
  return windows;
}
