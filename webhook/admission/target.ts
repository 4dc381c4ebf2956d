import { GROUP, KIND, SERVED_VERSIONS } from '../../api/index.ts';
import { type CompiledCrdVersion, type FieldValidation, isJsonObject, type JsonObject } from '../../crd/index.ts';
import { stringifyJson } from '../../crd/json-int64.ts';
import { allowed, errored } from './responses.ts';
import type { AdmissionRequest, AdmissionResponse } from './review.ts';
import type { SiteSchemas } from './site-schemas.ts';

/** Why a request is not for this webhook, or undefined when it is a StaticSite of a served version. */
export function wrongTarget(request: AdmissionRequest, servedVersions: readonly string[]): string | undefined {
  const { group, version, kind } = request.kind;
  if (group !== GROUP || kind !== KIND) {
    return `this webhook admits ${KIND}.${GROUP} objects, not ${kind}${group ? `.${group}` : ''}`;
  }
  if (!servedVersions.includes(version)) {
    return `${KIND}.${GROUP} has no version ${stringifyJson(version)}: served versions are ${servedVersions.join(', ')}`;
  }
  return undefined;
}

/** A CREATE or UPDATE of a StaticSite this webhook has a schema for. */
export interface SiteWrite {
  object: JsonObject;
  version: CompiledCrdVersion;
}

/**
 * What both admission webhooks check first: DELETE and CONNECT pass without decoding; another kind,
 * an unserved version or a missing object is a 400 denial. Returns the response to send, or the write.
 */
export function siteWrite(request: AdmissionRequest, schemas: SiteSchemas): AdmissionResponse | SiteWrite {
  const { uid } = request;
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allowed(uid);
  const notOurs = wrongTarget(request, SERVED_VERSIONS);
  if (notOurs) return errored(uid, 400, notOurs);
  if (!isJsonObject(request.object)) return errored(uid, 400, `${request.operation} request has no object`);
  const version = schemas.get(request.kind.version);
  if (!version) return errored(uid, 400, `no schema for version ${request.kind.version}`);
  return { object: request.object, version };
}

const FIELD_VALIDATION: ReadonlySet<string> = new Set(['Strict', 'Warn', 'Ignore']);

/** The request's fieldValidation option; `Warn`, the API server's default, when absent or unknown. */
export function fieldValidationOf(request: AdmissionRequest): FieldValidation {
  const asked = request.options?.fieldValidation;
  return typeof asked === 'string' && FIELD_VALIDATION.has(asked) ? (asked as FieldValidation) : 'Warn';
}
