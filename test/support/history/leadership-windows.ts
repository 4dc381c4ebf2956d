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
}

interface HolderChange {
  holder: string;
  at: number;
  answeredAt: number;
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
      if (holder !== undefined) changes.push({ holder, at: r.at, answeredAt: r.answeredAt ?? r.at });
    }
  }
  return changes.sort((a, b) => a.at - b.at || a.answeredAt - b.answeredAt);
}

/**
 * Who held the Lease when, as the API server saw it, from the Lease writes it accepted (2xx). Lease
 * updates carry a resourceVersion, so accepted writes are serialised and their receive order is the
 * server's order. The windows are as narrow as the record allows: one opens when the acquire was
 * answered (the replica cannot know it leads before that) and closes when the proxy received the write
 * that named another holder or released it (the server may have applied it any time after that), so
 * a write the old holder sent at or after that moment is outside.
 */
export function leadershipWindows(history: History, leaseName: string, leaseNamespace: string): LeadershipWindow[] {
  const windows: LeadershipWindow[] = [];
  let open: LeadershipWindow | undefined;
  for (const change of holderChanges(history, leaseName, leaseNamespace)) {
    if (change.holder === (open?.replica ?? '')) continue;
    if (open) {
      open.until = change.at;
      open.endedBy = change.holder;
    }
    open = change.holder === '' ? undefined : { replica: change.holder, from: change.answeredAt, until: Infinity };
    if (open) windows.push(open);
  }
  return windows;
}
