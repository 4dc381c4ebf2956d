import { parseApiPath } from './api-path.ts';
import type { RecordedRequest } from './types.ts';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** TokenReview, SubjectAccessReview and their kin are POSTs that store nothing. */
const REVIEW_GROUPS = new Set(['authentication.k8s.io', 'authorization.k8s.io']);

/** A request that could change stored state: not a read, not a watch, not a dry run, not a review. */
export function isMutating(r: RecordedRequest): boolean {
  if (READS.has(r.method) || r.watch || r.dryRun) return false;
  return !REVIEW_GROUPS.has(parseApiPath(r.path)?.group ?? '');
}

export function isAccepted(r: RecordedRequest): boolean {
  return r.status >= 200 && r.status < 300;
}

/** How the request ended, for messages. */
export function outcome(r: RecordedRequest): string {
  if (r.status === 0) return 'never answered';
  return isAccepted(r) ? `accepted (${r.status})` : `refused (${r.status})`;
}
