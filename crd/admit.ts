/**
 * What the API server does with a custom resource on create or update, up to storage:
 * decode (prune, drop non-nullable nulls, coerce metadata) -> default -> prepare (namespace,
 * generation, status) -> validate (metadata, OpenAPI schema, scale, embedded resources, list types)
 * -> CEL. The order and the outcomes follow customresource_handler.go, handlers/create.go,
 * customresource/strategy.go and validator.go in apiextensions-apiserver v0.37.
 */

import type { AdmissionResult, AdmitOptions, FieldValidation, TextDecoding } from './admission.ts';
import { invalidMessage } from './apimachinery/field-error.ts';
import { goQuote } from './apimachinery/go-format.ts';
import { WarningList } from './apimachinery/warning-list.ts';
import type { CompiledCrdVersion } from './compile.ts';
import { isJsonObject, type JsonObject } from './json-value.ts';
import { type Decoded, DecodeFailure, decode } from './schema/decode.ts';
import { applyDefaults } from './schema/defaulting.ts';
import { finalizerWarnings } from './schema/objectmeta-validate.ts';
import { clearSystemFields, generateName, metadataOf, placeInNamespace, prepare } from './schema/prepare.ts';
import { validate } from './schema/strategy-validate.ts';
import { checkTypeMeta } from './schema/type-meta.ts';

function badRequest(message: string, decodeErrors: string[], warnings: string[], object?: JsonObject): AdmissionResult {
  return { allowed: false, code: 400, message, errors: [], decodeErrors, causes: [], warnings, object };
}

function objectName(object: JsonObject): string {
  const name = metadataOf(object).name;
  return typeof name === 'string' ? name : '';
}

/** The decoded object, or the 400 the API server answers before any admission runs. */
export type DecodeResult =
  | { ok: true; object: JsonObject; kind: string; warnings: string[] }
  | { ok: false; rejection: AdmissionResult };

/**
 * The decoding half of admission, what a mutating webhook receives from the API server: type
 * meta checked, ObjectMeta decoded, unknown fields pruned (a warning each, or a 400 under Strict),
 * non-nullable nulls dropped, defaults applied. The input is never changed.
 */
export function decodeObject(
  version: CompiledCrdVersion,
  input: unknown,
  fieldValidation: FieldValidation = 'Warn',
  text: TextDecoding = {},
): DecodeResult {
  const { target, schema } = version;
  const typeMeta = checkTypeMeta(input, target, fieldValidation);
  if ('rejection' in typeMeta) {
    const { message, decodeErrors, warnings } = typeMeta.rejection;
    return { ok: false, rejection: badRequest(message, decodeErrors, warnings) };
  }
  const { kind, object: typed } = typeMeta;
  const cannotHandle = (detail: string) =>
    `${kind} in version ${goQuote(target.version)} cannot be handled as a ${target.kind}: ${detail}`;
  if (text.error !== undefined) {
    return { ok: false, rejection: badRequest(cannotHandle(text.error), [text.error], []) };
  }
  let decoded: Decoded;
  try {
    decoded = decode(schema, typed, kind === target.kind);
  } catch (error) {
    if (error instanceof DecodeFailure) {
      return { ok: false, rejection: badRequest(cannotHandle(error.message), [error.message], []) };
    }
    throw error;
  }
  const { object } = decoded;
  // The JSON decoder's strict errors (strconv.Quote), then fmt `unknown field "%s"`
  // (customresource_handler.go:1336): the path quoted raw, not escaped.
  const strictErrors =
    fieldValidation === 'Ignore'
      ? []
      : [
          ...(text.duplicateFields ?? []).map((p) => `duplicate field ${goQuote(p)}`),
          ...decoded.unknownFields.map((p) => `unknown field "${p}"`),
        ];
  if (fieldValidation === 'Strict' && strictErrors.length > 0) {
    const message = cannotHandle(`strict decoding error: ${strictErrors.join(', ')}`);
    return { ok: false, rejection: badRequest(message, strictErrors, [], object) };
  }
  return { ok: true, object, kind, warnings: strictErrors };
}

/**
 * Admits a custom resource as the API server would, without a server: decode, default, prepare,
 * validate (schema, then the CEL rules unless a blocking error occurred, ratcheting on update).
 */
export function admit(version: CompiledCrdVersion, input: unknown, options: AdmitOptions = {}): AdmissionResult {
  const { target, schema } = version;
  const decoded = decodeObject(version, input, options.fieldValidation, options.textDecoding);
  if (!decoded.ok) return decoded.rejection;
  const { object, kind } = decoded;
  const recorded = new WarningList(decoded.warnings);
  const warnings = recorded.texts;

  if (!placeInNamespace(object, target.namespaced, options.namespace)) {
    return badRequest(
      'the namespace of the provided object does not match the namespace sent on the request',
      [],
      warnings,
      object,
    );
  }
  let oldObject: JsonObject | undefined;
  try {
    oldObject = isJsonObject(options.oldObject) ? decode(schema, options.oldObject, true).object : undefined;
  } catch (error) {
    // The API server's own stored object always decodes; a caller's may not.
    if (error instanceof DecodeFailure)
      return badRequest(`the old object cannot be decoded: ${error.message}`, [error.message], warnings, object);
    throw error;
  }
  if (oldObject) placeInNamespace(oldObject, target.namespaced, options.namespace);
  clearSystemFields(object, oldObject === undefined);
  prepare(schema, object, oldObject);
  if (!oldObject) generateName(object, options.generateName);

  const validated = validate(version, object, oldObject, kind);
  const { errors } = validated;
  recorded.add(validated.warnings);
  if (errors.length > 0) {
    return {
      allowed: false,
      code: 422,
      message: invalidMessage(`${kind}.${target.group}`, objectName(object), errors, options.messageLimit),
      errors,
      decodeErrors: [],
      causes: errors
        .slice(0, options.causeLimit)
        .map((e) => ({ reason: e.type, message: e.errorBody(), field: e.field })),
      warnings,
      object,
    };
  }
  const finalizers = (metadataOf(object).finalizers as string[] | undefined) ?? [];
  const oldFinalizers = new Set((oldObject && (metadataOf(oldObject).finalizers as string[] | undefined)) ?? []);
  recorded.add(finalizerWarnings(finalizers.filter((f) => !oldFinalizers.has(f))));
  // The object answered is the one read back from storage, whose decoding defaults again: what
  // prepare dropped (a status the subresource resets) gets its schema default. Without the status
  // subresource prepare drops nothing and the decode's defaults stand.
  if (kind === target.kind && schema.statusSubresource) applyDefaults(object, schema.root);
  return { allowed: true, code: 200, message: '', errors: [], decodeErrors: [], causes: [], warnings, object };
}
