/**
 * The structural-schema engine: what kube-apiserver does with a custom resource before storing it,
 * without a server. Compile a CRD version once, then admit objects:
 *
 *   const { schema, target } = compileCrdVersion(crd, 'v1');
 *   const result = admit(schema, object, { ...target, namespace: 'default', fieldValidation: 'Strict' });
 *   // result: { allowed, code: 200 | 400 | 422, message, errors: FieldError[], causes, warnings, object }
 *
 * admit() decodes (typed ObjectMeta, pruning, null removal), defaults, prepares (namespace,
 * generation, status) and validates (ObjectMeta, OpenAPI schema, scale, embedded resources, list
 * types), then runs `celHook` unless a blocking error occurred. Messages are byte-identical to
 * kube-apiserver v1.37 (see test/e2e/schema-parity.test.ts).
 */

export {
  aggregateMessage,
  FieldError,
  type FieldErrorType,
  fieldErrors,
  formatBadValue,
  invalidMessage,
  NIL_PATH,
} from '../apimachinery/field-error.ts';
export {
  type AdmissionResult,
  type AdmitOptions,
  admit,
  CEL_SKIPPED_DETAIL,
  type CelHook,
  type CelHookInput,
  type FieldValidation,
  type StatusCause,
} from './admit.ts';
export { type CompiledSchema, type CompileOptions, compileSchema, type SchemaNode } from './compile.ts';
export { type CompiledCrdVersion, CrdVersionError, compileCrdVersion } from './crd-version.ts';
export { applyDefaults } from './defaulting.ts';
export type { JsonObject } from './json-value.ts';
export { simpleNameGenerator } from './prepare.ts';
export { type PruneOptions, pruneUnknownFields } from './prune.ts';
