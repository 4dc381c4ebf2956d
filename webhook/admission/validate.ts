import { API_VERSION_V1, convertStaticSite, GROUP, KIND, type StaticSiteV1 } from '../../api/index.ts';
import { type AdmissionResult, admit, fieldErrors, invalidMessage, isJsonObject } from '../../crd/index.ts';
import { MESSAGE_LIMIT } from './bounds.ts';
import type { HostnameIndex } from './hostname-index.ts';
import { allowed, denied, errored } from './responses.ts';
import type { AdmissionRequest, AdmissionResponse, Status } from './review.ts';
import type { SiteSchemas } from './site-schemas.ts';
import { fieldValidationOf, siteWrite } from './target.ts';

export interface ValidatorOptions {
  schemas: SiteSchemas;
  /** The cross-object rule (unique hostname) runs only with an index; standalone mode has none. */
  hostnames?: HostnameIndex;
}

function statusFor(result: AdmissionResult, name: string): Status {
  if (result.code === 422) {
    return {
      code: 422,
      reason: 'Invalid',
      message: result.message,
      details: { name, group: GROUP, kind: KIND, causes: result.causes },
    };
  }
  return { code: result.code, reason: 'BadRequest', message: result.message };
}

function hostnameOf(object: unknown): string | undefined {
  try {
    const site = convertStaticSite(object, API_VERSION_V1) as StaticSiteV1;
    return site.spec.hostname;
  } catch {
    return undefined;
  }
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
  return hostnameOf(request.oldObject) !== hostname;
}

/**
 * The validating webhook: the structural schema and the CEL rules (transition rules and
 * ratcheting against oldObject on UPDATE), then the rule no schema can express: a hostname is held
 * by one StaticSite in the whole cluster.
 */
export function createValidator(options: ValidatorOptions): (request: AdmissionRequest) => AdmissionResponse {
  return (request) => {
    const { uid } = request;
    const write = siteWrite(request, options.schemas);
    if ('uid' in write) return write;
    const { version } = write;
    if (request.operation === 'UPDATE' && !isJsonObject(request.oldObject)) {
      return errored(uid, 400, 'UPDATE request has no oldObject');
    }

    const result = admit(version, write.object, {
      oldObject: request.operation === 'UPDATE' ? request.oldObject : undefined,
      fieldValidation: fieldValidationOf(request),
      namespace: request.namespace,
      messageLimit: MESSAGE_LIMIT,
    });
    const metadata = isJsonObject(write.object.metadata) ? write.object.metadata : {};
    const name = typeof metadata.name === 'string' ? metadata.name : (request.name ?? '');
    if (!result.allowed) return denied(uid, statusFor(result, name), result.warnings);

    const hostname = options.hostnames && hostnameOf(result.object);
    if (hostname !== undefined && options.hostnames && claimsHostname(request, metadata, hostname)) {
      const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : (request.namespace ?? '');
      const taken = options.hostnames.holders(hostname).some((h) => h.namespace !== namespace || h.name !== name);
      if (taken) {
        const error = fieldErrors.duplicate('spec.hostname', hostname);
        return denied(
          uid,
          {
            code: 422,
            reason: 'Invalid',
            message: invalidMessage(`${KIND}.${GROUP}`, name, [error]),
            details: {
              name,
              group: GROUP,
              kind: KIND,
              causes: [{ reason: error.type, message: error.errorBody(), field: error.field }],
            },
          },
          result.warnings,
        );
      }
    }
    return allowed(uid, result.warnings);
  };
}
