/**
 * What kube-apiserver does to a custom resource, without a server. Compile a CRD version once
 * (its structural schema and its CEL rules, always together), then admit objects:
 *
 *   import { admit, compileCrdVersion } from 'staticsite-operator/crd';
 *   const v1 = compileCrdVersion(crd, 'v1');
 *   const result = admit(v1, object, { namespace: 'default', fieldValidation: 'Strict' });
 *   // { allowed, code: 200 | 400 | 422, message, errors, causes, warnings, object }
 *
 * Messages are byte-identical to kube-apiserver v1.37 for the same schema (see docs/engine.md).
 */

export type {
  AdmissionResult,
  AdmitOptions,
  CrdTarget,
  FieldValidation,
  StatusCause,
  TextDecoding,
} from './admission.ts';
export { admit, type DecodeResult, decodeObject } from './admit.ts';
export {
  aggregateMessage,
  cutText,
  FieldError,
  type FieldErrorType,
  fieldErrors,
  formatBadValue,
  invalidMessage,
  NIL_PATH,
  printedErrors,
} from './apimachinery/field-error.ts';
export { recordWarnings, type WarningLimits } from './apimachinery/warning-list.ts';
export { type CelEnvironment, createCelEnvironment } from './cel/environment.ts';
export { type ExpressionResult, evaluateExpression } from './cel/expression.ts';
export { type CompileCrdOptions, type CompiledCrdVersion, CrdVersionError, compileCrdVersion } from './compile.ts';
export { deepCopyJson, isJsonObject, type JsonObject, jsonEqual } from './json-value.ts';
export { simpleNameGenerator } from './schema/prepare.ts';
export { CEL_SKIPPED_DETAIL } from './schema/strategy-validate.ts';
