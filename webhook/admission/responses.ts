import type { AdmissionResponse, Status } from './review.ts';

/** Response constructors, after controller-runtime's Allowed / Denied / Patched / Errored. */

export function allowed(uid: string, warnings: string[] = []): AdmissionResponse {
  return { uid, allowed: true, ...(warnings.length > 0 && { warnings }) };
}

export function patched(uid: string, patch: unknown[], warnings: string[] = []): AdmissionResponse {
  if (patch.length === 0) return allowed(uid, warnings);
  return {
    uid,
    allowed: true,
    patchType: 'JSONPatch',
    patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
    ...(warnings.length > 0 && { warnings }),
  };
}

/** A denial whose status the API server returns to the client (prefixed with the webhook's name). */
export function denied(uid: string, status: Status, warnings: string[] = []): AdmissionResponse {
  return {
    uid,
    allowed: false,
    status: { metadata: {}, status: 'Failure', ...status },
    ...(warnings.length > 0 && { warnings }),
  };
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
