import type { JSONSchemaProps } from '../../api/index.ts';
import { OMIT_VALUE as CEL_OMIT_VALUE } from '../cel/field-error.ts';
import { type FieldError as CelFieldError, compileRules, evaluate, formatFieldErrors } from '../cel/index.ts';
import type { CelHook } from '../schema/admit.ts';
import { FieldError, OMIT_VALUE } from '../schema/field-error.ts';

/** A CRD schema whose rules do not compile: the API server would refuse the CRD itself. */
export class RuleCompileError extends Error {
  override name = 'RuleCompileError';
}

function toSchemaError(error: CelFieldError): FieldError {
  const badValue = error.badValue === CEL_OMIT_VALUE ? OMIT_VALUE : error.badValue;
  return new FieldError(error.type, error.field, badValue, error.detail);
}

/**
 * Compiles a schema's x-kubernetes-validations once and returns the hook the schema engine runs
 * after its own checks; undefined when the schema has no rules.
 */
export function celHookFor(openAPIV3Schema: JSONSchemaProps, basePath?: string): CelHook | undefined {
  const { compiled, errors } = compileRules(openAPIV3Schema, basePath === undefined ? {} : { basePath });
  if (errors.length > 0) {
    throw new RuleCompileError(`the schema's CEL rules do not compile: ${formatFieldErrors(errors)}`);
  }
  if (!compiled.root) return undefined;
  return ({ object, oldObject, warn }) => {
    const result = evaluate(compiled, object, oldObject);
    for (const text of result.warnings) warn?.(text);
    return result.errors.map(toSchemaError);
  };
}
