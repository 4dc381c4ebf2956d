import { boundMessage, recordWarnings } from './bounds.ts';
import type { AdmissionResponse, Status } from './review.ts';

/** Causes kept in a denial: each names a field, and a list of thousands helps nobody. */
const MAX_CAUSES = 100;

/** Response constructors, after controller-runtime's Allowed / Denied / Patched / Errored. */

function withWarnings(warnings: readonly string[]): { warnings?: string[] } {
  if (warnings.length === 0) return {};
  return { warnings: recordWarnings(warnings) };
}

export function allowed(uid: string, warnings: string[] = []): AdmissionResponse {
  return { uid, allowed: true, ...withWarnings(warnings) };
}

export function patched(uid: string, patch: unknown[], warnings: string[] = []): AdmissionResponse {
  if (patch.length === 0) return allowed(uid, warnings);
  return {
    uid,
    allowed: true,
    patchType: 'JSONPatch',
    patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
    ...withWarnings(warnings),
  };
}

/** A denial whose status the API server returns to the client (prefixed with the webhook's name). */
export function denied(uid: string, status: Status, warnings: string[] = []): AdmissionResponse {
  const bounded: Status = { ...status };
  if (status.message !== undefined) bounded.message = boundMessage(status.message);
  if (status.details) {
    const { name, causes } = status.details;
    bounded.details = {
      ...status.details,
      ...(name !== undefined && { name: boundMessage(name) }),
      ...(causes && {
        causes: causes
          .slice(0, MAX_CAUSES)
          .map((c) => (c.message === undefined ? c : { ...c, message: boundMessage(c.message) })),
      }),
    };
  }
  return { uid, allowed: false, status: { metadata: {}, status: 'Failure', ...bounded }, ...withWarnings(warnings) };
}

/** The request could not be processed (bad object, wrong kind): a denial with that code. */
export function errored(uid: string, code: number, message: string): AdmissionResponse {
  return denied(uid, { code, message, reason: reasonForCode(code) });
}

function reasonForCode(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 403:
      return 'Forbidden';
    case 413:
      return 'RequestEntityTooLarge';
    case 422:
      return 'Invalid';
    default:
      return 'InternalError';
  }
}
