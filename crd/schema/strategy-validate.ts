/**
 * customResourceStrategy.Validate / ValidateUpdate (customresource/strategy.go:201, :274) and the
 * validator they call (customresource/validator.go), in the API server's order: type meta, object
 * meta, OpenAPI schema, scale, embedded resources, list types, then CEL unless a blocking error
 * occurred.
 */

import type { CrdTarget, RuleRunner } from '../admission.ts';
import { append } from '../apimachinery/append.ts';
import { type FieldError, type FieldErrorType, fieldErrors, NIL_PATH } from '../apimachinery/field-error.ts';
import { nameIsDnsSubdomain, pathSegmentName } from '../apimachinery/names.ts';
import type { JsonObject } from '../json-value.ts';
import type { CompiledSchema } from './compile.ts';
import { Correlation } from './correlation.ts';
import { validateEmbeddedResources } from './embedded.ts';
import { validateListSetsAndMaps } from './listtype.ts';
import { labelErrors, validateObjectMeta, validateObjectMetaUpdate } from './objectmeta-validate.ts';
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

/** What objects of one CRD version validate against. */
export interface ValidationTarget {
  schema: CompiledSchema;
  target: CrdTarget;
  runRules: RuleRunner;
}

interface ValidationResult {
  errors: FieldError[];
  warnings: string[];
}

function objectMetaErrors(target: CrdTarget, object: JsonObject, oldObject: JsonObject | undefined): FieldError[] {
  if (oldObject === undefined) {
    return validateObjectMeta(metadataOf(object), 'metadata', {
      requiresNamespace: target.namespaced,
      nameFn: nameIsDnsSubdomain,
      nameMayBeGenerated: true,
    });
  }
  // rest.ValidateUpdate: the common fields (ValidateObjectMetaAccessor with path-segment names,
  // then ValidateObjectMetaAccessorUpdate), then the strategy's ObjectMeta update check, which
  // runs ValidateObjectMetaAccessorUpdate again: a bad label on update is reported three times.
  // The same checks give the same errors: the labels are checked once, the update check computed once
  // (a hostile review's labels are costly).
  const meta = metadataOf(object);
  const labels = labelErrors(meta, 'metadata');
  const errors = validateObjectMeta(meta, 'metadata', {
    requiresNamespace: target.namespaced,
    nameFn: pathSegmentName,
    nameMayBeGenerated: false,
    labelErrors: labels,
  });
  const update = validateObjectMetaUpdate(meta, metadataOf(oldObject), 'metadata', labels);
  append(errors, update);
  append(errors, update);
  return errors;
}

/**
 * customResourceStrategy.Validate / ValidateUpdate, in the API server's order; `kind` is the object's
 * (another than the target's fails alone).
 */
export function validate(
  version: ValidationTarget,
  object: JsonObject,
  oldObject: JsonObject | undefined,
  kind: string,
): ValidationResult {
  const { schema: compiled, target } = version;
  const result: ValidationResult = { errors: [], warnings: [] };
  if (kind !== target.kind) {
    // ValidateTypeMeta fails alone; the strategy still walks embedded resources, list types and CEL.
    result.errors.push(fieldErrors.invalid('kind', object.kind, `must be ${target.kind}`));
    validateStructure(version, object, oldObject, result);
    return result;
  }
  append(result.errors, objectMetaErrors(target, object, oldObject));
  const correlation = oldObject ? new Correlation(object, oldObject, compiled.root) : undefined;
  append(result.errors, toFieldErrors(validateAgainstSchema(compiled.root, object, correlation)));
  append(result.errors, validateScaleSpec(object, compiled.scale));
  append(result.errors, validateScaleStatus(object, compiled.scale));
  validateStructure(version, object, oldObject, result);
  return result;
}

/** Embedded resources, list-type invariants, then CEL unless a blocking error occurred (strategy.go:211-224). */
function validateStructure(
  version: ValidationTarget,
  object: JsonObject,
  oldObject: JsonObject | undefined,
  result: ValidationResult,
): void {
  const { schema: compiled } = version;
  const { errors } = result;
  if (compiled.hasEmbeddedResources) append(errors, validateEmbeddedResources(object, compiled.root));
  if (compiled.hasListTypes) {
    if (!oldObject || validateListSetsAndMaps(compiled.root, oldObject).length === 0) {
      append(errors, validateListSetsAndMaps(compiled.root, object));
    }
  }
  if (!compiled.hasCelRules) return;
  if (errors.some((e) => BLOCKING.has(e.type))) errors.push(fieldErrors.invalid(NIL_PATH, null, CEL_SKIPPED_DETAIL));
  else {
    const rules = version.runRules(object, oldObject);
    append(errors, rules.errors);
    append(result.warnings, rules.warnings);
  }
}
