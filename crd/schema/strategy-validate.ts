/**
 * customResourceStrategy.Validate / ValidateUpdate (customresource/strategy.go:201, :274) and the
 * validator they call (customresource/validator.go), in the API server's order: type meta, object
 * meta, OpenAPI schema, scale, embedded resources, list types, then CEL unless a blocking error
 * occurred.
 */

import type { CrdTarget, RuleRunner } from '../admission.ts';
import { append } from '../apimachinery/append.ts';
import { type FieldError, type FieldErrorType, fieldErrors, NIL_PATH } from '../apimachinery/field-error.ts';
import type { JsonObject } from '../apimachinery/json-value.ts';
import { nameIsDnsSubdomain, pathSegmentName } from '../apimachinery/names.ts';
import type { CompiledSchema } from './compile.ts';
import { Correlation } from './correlation.ts';
import { validateEmbeddedResources } from './embedded.ts';
import { validateListSetsAndMaps } from './listtype.ts';
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
  target: CrdTarget,
  runRules: RuleRunner,
  sameKind: boolean,
): { errors: FieldError[]; warnings: string[] } {
  const warnings: string[] = [];
  const errors: FieldError[] = [];
  if (!sameKind) {
    // ValidateTypeMeta fails alone; the strategy still walks embedded resources, list types and CEL.
    errors.push(fieldErrors.invalid('kind', object.kind, `must be ${target.kind}`));
    append(errors, validateStructure(compiled, object, oldObject, runRules, errors, warnings));
    return { errors, warnings };
  }
  if (oldObject === undefined) {
    append(
      errors,
      validateObjectMeta(metadataOf(object), 'metadata', {
        requiresNamespace: target.namespaced,
        nameFn: nameIsDnsSubdomain,
        nameMayBeGenerated: true,
      }),
    );
  } else {
    // rest.ValidateUpdate: the common fields (ValidateObjectMetaAccessor with path-segment names,
    // then ValidateObjectMetaAccessorUpdate), then the strategy's ObjectMeta update check, which
    // runs ValidateObjectMetaAccessorUpdate again: a bad label on update is reported three times.
    const meta = metadataOf(object);
    const old = metadataOf(oldObject);
    append(
      errors,
      validateObjectMeta(meta, 'metadata', {
        requiresNamespace: target.namespaced,
        nameFn: pathSegmentName,
        nameMayBeGenerated: false,
      }),
    );
    // The same check twice gives the same errors: computed once (a hostile review's labels are costly).
    const update = validateObjectMetaUpdate(meta, old, 'metadata');
    append(errors, update);
    append(errors, update);
  }
  const correlation = oldObject ? new Correlation(object, oldObject, compiled.root) : undefined;
  append(errors, toFieldErrors(validateAgainstSchema(compiled.root, object, correlation)));
  append(errors, validateScaleSpec(object, compiled.scale));
  append(errors, validateScaleStatus(object, compiled.scale));
  append(errors, validateStructure(compiled, object, oldObject, runRules, errors, warnings));
  return { errors, warnings };
}

/** Embedded resources, list-type invariants, then CEL unless a blocking error occurred (strategy.go:211-224). */
function validateStructure(
  compiled: CompiledSchema,
  object: JsonObject,
  oldObject: JsonObject | undefined,
  runRules: RuleRunner,
  before: readonly FieldError[],
  warnings: string[],
): FieldError[] {
  const errors: FieldError[] = [];
  if (compiled.hasEmbeddedResources) append(errors, validateEmbeddedResources(object, compiled.root));
  if (compiled.hasListTypes) {
    if (!oldObject || validateListSetsAndMaps(compiled.root, oldObject).length === 0) {
      append(errors, validateListSetsAndMaps(compiled.root, object));
    }
  }
  if (compiled.hasCelRules) {
    const blocked = before.some((e) => BLOCKING.has(e.type)) || errors.some((e) => BLOCKING.has(e.type));
    if (blocked) errors.push(fieldErrors.invalid(NIL_PATH, null, CEL_SKIPPED_DETAIL));
    else {
      const result = runRules(object, oldObject);
      append(errors, result.errors);
      append(warnings, result.warnings);
    }
  }
  return errors;
}
