import { GROUP, KIND, specHostname } from '../../api/index.ts';
import { type AdmissionResult, admit, isJsonObject } from '../../crd/index.ts';
import { type HostnameClaim, uniqueHostnameStep, type Verdict } from '../review/cross-object.ts';
import { ENGINE_MESSAGE_LIMIT } from './bounds.ts';
import type { HostnameIndex } from './hostname-index.ts';
import { allowed, denied, errored, MAX_CAUSES, reasonForCode } from './responses.ts';
import type { AdmissionRequest, AdmissionResponse, Status } from './review.ts';
import type { SiteSchemas } from './site-schemas.ts';
import { fieldValidationOf, siteWrite } from './target.ts';

export interface ValidatorOptions {
  schemas: SiteSchemas;
  /** The cross-object rule (unique hostname) runs only with an index; standalone mode has none. */
  hostnames?: HostnameIndex;
}

/** The engine's refusal as the API server's Status: a 422 names the object and its causes; a 400 only says why. */
function statusFor(result: AdmissionResult, name: string): Status {
  const status = { code: result.code, reason: reasonForCode(result.code), message: result.message };
  if (result.code !== 422) return status;
  return { ...status, details: { name, group: GROUP, kind: KIND, causes: result.causes } };
}

/**
 * Whether this write claims a hostname, so the unique-hostname rule applies. It never blocks a write
 * that keeps the hostname it had (two sites that already share one must still be updatable and
 * deletable: removing the finalizer is an update) or one to a terminating site. The rule is an
 * early, friendly refusal from the watch cache; the controller's create-only claim decides races.
 */
function claimsHostname(request: AdmissionRequest, metadata: Record<string, unknown>, hostname: string): boolean {
  if (metadata.deletionTimestamp !== undefined && metadata.deletionTimestamp !== null) return false;
  if (request.operation !== 'UPDATE') return true;
  const old = request.oldObject as { metadata?: { deletionTimestamp?: unknown } } | undefined;
  if (old?.metadata?.deletionTimestamp !== undefined && old.metadata.deletionTimestamp !== null) return false;
  return specHostname(request.oldObject) !== hostname;
}

export type { HostnameClaim };

/** What the schema and CEL rules decide, and the hostname the write claims when they allow it. */
export type SchemaVerdict = Pick<Verdict, 'response' | 'claim'>;

/**
 * The validating webhook's schema part: the structural schema and the CEL rules (transition rules
 * and ratcheting against oldObject on UPDATE). Needs nothing but the request, so it runs in the
 * review workers; the claim it returns is judged by the unique-hostname step (review/cross-object.ts) where the index lives.
 */
export function createSchemaValidator(options: { schemas: SiteSchemas }): (request: AdmissionRequest) => SchemaVerdict {
  return (request) => {
    const { uid } = request;
    const write = siteWrite(request, options.schemas);
    if ('uid' in write) return { response: write };
    const { version } = write;
    if (request.operation === 'UPDATE' && !isJsonObject(request.oldObject)) {
      return { response: errored(uid, 400, 'UPDATE request has no oldObject') };
    }

    const result = admit(version, write.object, {
      oldObject: request.operation === 'UPDATE' ? request.oldObject : undefined,
      fieldValidation: fieldValidationOf(request),
      namespace: request.namespace,
      messageLimit: ENGINE_MESSAGE_LIMIT,
      causeLimit: MAX_CAUSES,
    });
    const metadata = isJsonObject(write.object.metadata) ? write.object.metadata : {};
    const name = typeof metadata.name === 'string' ? metadata.name : (request.name ?? '');
    if (!result.allowed) return { response: denied(uid, statusFor(result, name), result.warnings) };

    const response = allowed(uid, result.warnings);
    const hostname = specHostname(result.object);
    if (hostname === undefined || !claimsHostname(request, metadata, hostname)) return { response };
    const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : (request.namespace ?? '');
    return { response, claim: { hostname, namespace, name } };
  };
}

/**
 * The validating webhook in one function, for users who run it in-process: the schema part, then,
 * with an index, the unique-hostname step the server's pipeline runs. Standalone (no index) the rule
 * is off.
 */
export function createValidator(options: ValidatorOptions): (request: AdmissionRequest) => AdmissionResponse {
  const schema = createSchemaValidator(options);
  const unique = options.hostnames ? uniqueHostnameStep(options.hostnames) : undefined;
  return (request) => (unique ? unique(schema(request)) : schema(request)).response;
}
