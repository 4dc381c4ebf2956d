import { recordWarnings } from '../../crd/index.ts';
import { stringifyJson } from '../../crd/json-int64.ts';
import { boundMessage, MESSAGE_LIMIT } from './bounds.ts';
import type { AdmissionResponse, Status } from './review.ts';

/** Causes kept in a denial: each names a field, and a list of thousands helps nobody. */
export const MAX_CAUSES = 100;

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
    patch: Buffer.from(stringifyJson(patch)).toString('base64'),
    ...withWarnings(warnings),
  };
}

/**
 * At most MAX_CAUSES causes, their messages MESSAGE_LIMIT characters in all: the message that
 * crosses it is cut, later ones dropped (the status message already names every error, bounded).
 */
function boundCauses(causes: NonNullable<Status['details']>['causes'] & object) {
  const kept: typeof causes = [];
  let budget = MESSAGE_LIMIT;
  for (const cause of causes.slice(0, MAX_CAUSES)) {
    if (cause.message === undefined) {
      kept.push(cause);
      continue;
    }
    if (budget <= 0) break;
    kept.push({ ...cause, message: boundMessage(cause.message, budget) });
    budget -= cause.message.length;
  }
  return kept;
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
      ...(causes && { causes: boundCauses(causes) }),
    };
  }
  return { uid, allowed: false, status: { metadata: {}, status: 'Failure', ...bounded }, ...withWarnings(warnings) };
}

/** The request could not be processed (bad object, wrong kind): a denial with that code. */
export function errored(uid: string, code: number, message: string): AdmissionResponse {
  const reason = reasonForCode(code);
  return denied(uid, { code, message, ...(reason !== undefined && { reason }) });
}

/**
 * The metav1.StatusReason Kubernetes gives each HTTP code (k8s.io/apimachinery/pkg/api/errors: the
 * constructor for the code, and NewGenericServerResponse). The one map from code to reason in the
 * webhook: every Status it writes, in a review or as an HTTP answer, takes its reason from here.
 * 410 is `Gone` (NewGone); `Expired` (NewResourceExpired) is the same code for an expired list or
 * watch resourceVersion, which a webhook never answers.
 */
const REASONS: ReadonlyMap<number, string> = new Map([
  [400, 'BadRequest'],
  [401, 'Unauthorized'],
  [403, 'Forbidden'],
  [404, 'NotFound'],
  [405, 'MethodNotAllowed'],
  [406, 'NotAcceptable'],
  [409, 'Conflict'],
  [410, 'Gone'],
  [413, 'RequestEntityTooLarge'],
  [415, 'UnsupportedMediaType'],
  [422, 'Invalid'],
  [429, 'TooManyRequests'],
  [500, 'InternalError'],
  [503, 'ServiceUnavailable'],
  [504, 'Timeout'],
]);

/**
 * The reason for `code`; as NewGenericServerResponse has it, any other 5xx is `InternalError` and
 * any other code has none (StatusReasonUnknown, the empty reason, which a Status leaves out).
 */
export function reasonForCode(code: number): string | undefined {
  return REASONS.get(code) ?? (code >= 500 ? 'InternalError' : undefined);
}
