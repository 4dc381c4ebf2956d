/**
 * What the API server does with a custom resource on create or update, up to storage:
 * decode (prune, drop non-nullable nulls, coerce metadata) -> default -> prepare (namespace,
 * generation, status) -> validate (metadata, OpenAPI schema, scale, embedded resources, list types)
 * -> CEL. The order and the outcomes follow customresource_handler.go, handlers/create.go,
 * customresource/strategy.go and validator.go in apiextensions-apiserver v0.37.
 */

import { invalidMessage } from '../apimachinery/field-error.ts';
import { goQuote } from '../apimachinery/go-format.ts';
import type { AdmissionResult, AdmitOptions, CelHookInput } from './admission.ts';
import type { CompiledSchema } from './compile.ts';
import { type Decoded, DecodeFailure, decode } from './decode.ts';
import { isJsonObject, type JsonObject } from './json-value.ts';
import { finalizerWarnings } from './objectmeta-validate.ts';
import { generateName, metadataOf, placeInNamespace, prepare } from './prepare.ts';
import { validate } from './strategy-validate.ts';
import { checkTypeMeta } from './type-meta.ts';

export type {
  AdmissionResult,
  AdmitOptions,
  CelHook,
  CelHookInput,
  FieldValidation,
  StatusCause,
} from './admission.ts';
export { CEL_SKIPPED_DETAIL } from './strategy-validate.ts';

function badRequest(message: string, decodeErrors: string[], warnings: string[], object?: JsonObject): AdmissionResult {
  return { allowed: false, code: 400, message, errors: [], decodeErrors, causes: [], warnings, object };
}

function objectName(object: JsonObject): string {
  const name = metadataOf(object).name;
  return typeof name === 'string' ? name : '';
}

/** Validates and defaults a custom resource as the API server would, without a server. */
export function admit(compiled: CompiledSchema, input: unknown, options: AdmitOptions): AdmissionResult {
  const fieldValidation = options.fieldValidation ?? 'Warn';
  const namespaced = options.namespaced ?? true;
  const typeMeta = checkTypeMeta(input, options, fieldValidation);
  if ('rejection' in typeMeta) {
    const { message, decodeErrors, warnings } = typeMeta.rejection;
    return badRequest(message, decodeErrors, warnings);
  }
  const { kind, object: typed } = typeMeta;
  const cannotHandle = (detail: string) =>
    `${kind} in version ${goQuote(options.version)} cannot be handled as a ${options.kind}: ${detail}`;
  const sameKind = kind === options.kind;
  const qualifiedKind = `${kind}.${options.group}`;

  let decoded: Decoded;
  try {
    decoded = decode(compiled, typed, sameKind);
  } catch (error) {
    if (error instanceof DecodeFailure) return badRequest(cannotHandle(error.message), [error.message], []);
    throw error;
  }
  const { object } = decoded;
  const trackUnknown = fieldValidation !== 'Ignore';
  const unknownErrors = trackUnknown ? decoded.unknownFields.map((p) => `unknown field ${goQuote(p)}`) : [];
  if (fieldValidation === 'Strict' && unknownErrors.length > 0) {
    return badRequest(cannotHandle(`strict decoding error: ${unknownErrors.join(', ')}`), unknownErrors, [], object);
  }
  const warnings = [...unknownErrors];

  if (!placeInNamespace(object, namespaced, options.namespace)) {
    return badRequest(
      'the namespace of the provided object does not match the namespace sent on the request',
      [],
      warnings,
      object,
    );
  }
  const oldObject = isJsonObject(options.oldObject) ? decode(compiled, options.oldObject, true).object : undefined;
  if (oldObject) placeInNamespace(oldObject, namespaced, options.namespace);
  prepare(compiled, object, oldObject);
  if (!oldObject) generateName(object, options.generateName);

  const celHook = options.celHook;
  const celWarnings: string[] = [];
  const validateOptions = celHook
    ? { ...options, celHook: (input: CelHookInput) => celHook({ ...input, warn: (text) => celWarnings.push(text) }) }
    : options;
  const errors = validate(compiled, object, oldObject, validateOptions, sameKind, namespaced);
  warnings.push(...celWarnings);
  if (errors.length > 0) {
    return {
      allowed: false,
      code: 422,
      message: invalidMessage(qualifiedKind, objectName(object), errors),
      errors,
      decodeErrors: [],
      causes: errors.map((e) => ({ reason: e.type, message: e.errorBody(), field: e.field })),
      warnings,
      object,
    };
  }
  const finalizers = (metadataOf(object).finalizers as string[] | undefined) ?? [];
  const oldFinalizers = new Set((oldObject && (metadataOf(oldObject).finalizers as string[] | undefined)) ?? []);
  warnings.push(...finalizerWarnings(finalizers.filter((f) => !oldFinalizers.has(f))));
  return { allowed: true, code: 200, message: '', errors: [], decodeErrors: [], causes: [], warnings, object };
}
