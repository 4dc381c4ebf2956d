/**
 * customResourceStrategy.Validate / ValidateUpdate (customresource/strategy.go:201, :274) and the
 * validator they call (customresource/validator.go), in the API server's order: type meta, object
 * meta, OpenAPI schema, scale, embedded resources, list types, then CEL unless a blocking error
 * occurred.
 */

import { type FieldError, type FieldErrorType, fieldErrors, NIL_PATH } from '../apimachinery/field-error.ts';
import type { AdmitOptions } from './admission.ts';
import type { CompiledSchema } from './compile.ts';
import { Correlation } from './correlation.ts';
import { validateEmbeddedResources } from './embedded.ts';
import type { JsonObject } from './json-value.ts';
import { validateListSetsAndMaps } from './listtype.ts';
import { nameIsDnsSubdomain } from './names.ts';
import { validateObjectMeta, validateObjectMetaUpdate } from './objectmeta-validate.ts';
import { toFieldErrors } from './openapi-errors.ts';
import { validateAgainstSchema } from './openapi-validate.ts';
import { metadataOf } from './prepare.ts';
import { validateScaleSpec, validateScaleStatus } from './scale.ts';

/** The note the API server appends when it skipped CEL (strategy.go:404, hasBlockingErr). */
export const CEL_SKIPPED_DETAIL =
  'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

const BLOCKING: ReadonlySet<FieldErrorType> = new Set([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
]);

/** customResourceStrategy.Validate / ValidateUpdate, in the API server's order. */
export function validate(
  compiled: CompiledSchema,
  object: JsonObject,
  oldObject: JsonObject | undefined,
  options: AdmitOptions,
  sameKind: boolean,
  namespaced: boolean,
): FieldError[] {
  const errors: FieldError[] = [];
  if (!sameKind) {
    // ValidateTypeMeta fails alone; the strategy still walks embedded resources, list types and CEL.
    errors.push(fieldErrors.invalid('kind', object.kind, `must be ${options.kind}`));
    return [...errors, ...validateStructure(compiled, object, oldObject, options, errors)];
  }
  if (oldObject === undefined) {
    errors.push(
      ...validateObjectMeta(metadataOf(object), 'metadata', {
        requiresNamespace: namespaced,
        nameFn: nameIsDnsSubdomain,
        nameMayBeGenerated: true,
      }),
    );
  } else {
    errors.push(...validateObjectMetaUpdate(metadataOf(object), metadataOf(oldObject), 'metadata'));
  }
  const correlation = oldObject ? new Correlation(object, oldObject, compiled.root) : undefined;
  errors.push(...toFieldErrors(validateAgainstSchema(compiled.root, object, correlation)));
  errors.push(...validateScaleSpec(object, compiled.scale));
  errors.push(...validateScaleStatus(object, compiled.scale));
  errors.push(...validateStructure(compiled, object, oldObject, options, errors));
  return errors;
}

/** Embedded resources, list-type invariants, then CEL unless a blocking error occurred (strategy.go:211-224). */
function validateStructure(
  compiled: CompiledSchema,
  object: JsonObject,
  oldObject: JsonObject | undefined,
  options: AdmitOptions,
  before: readonly FieldError[],
): FieldError[] {
  const errors: FieldError[] = [];
  if (compiled.hasEmbeddedResources) errors.push(...validateEmbeddedResources(object, compiled.root));
  if (compiled.hasListTypes) {
    if (!oldObject || validateListSetsAndMaps(compiled.root, oldObject).length === 0) {
      errors.push(...validateListSetsAndMaps(compiled.root, object));
    }
  }
  if (compiled.hasCelRules) {
    const blocked = before.some((e) => BLOCKING.has(e.type)) || errors.some((e) => BLOCKING.has(e.type));
    if (blocked) errors.push(fieldErrors.invalid(NIL_PATH, null, CEL_SKIPPED_DETAIL));
    else if (options.celHook) errors.push(...options.celHook({ schema: compiled, object, oldObject }));
  }
  return errors;
}
