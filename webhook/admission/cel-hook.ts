import type { JSONSchemaProps } from '../../api/index.ts';
import { aggregateMessage, compileRules, evaluate } from '../cel/index.ts';
import type { CelHook } from '../schema/admit.ts';

/** A CRD schema whose rules do not compile: the API server would refuse the CRD itself. */
export class RuleCompileError extends Error {
  override name = 'RuleCompileError';
}

/**
 * Compiles a schema's x-kubernetes-validations once and returns the hook the schema engine runs
 * after its own checks; undefined when the schema has no rules.
 */
export function celHookFor(openAPIV3Schema: JSONSchemaProps, basePath?: string): CelHook | undefined {
  const { compiled, errors } = compileRules(openAPIV3Schema, basePath === undefined ? {} : { basePath });
  if (errors.length > 0) {
    throw new RuleCompileError(`the schema's CEL rules do not compile: ${aggregateMessage(errors)}`);
  }
  if (!compiled.root) return undefined;
  return ({ object, oldObject, warn }) => {
    const result = evaluate(compiled, object, oldObject);
    for (const text of result.warnings) warn?.(text);
    return result.errors;
  };
}
