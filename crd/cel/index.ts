/**
 * The Kubernetes CEL environment: compile a structural schema's x-kubernetes-validations rules and evaluate them
 * against objects the way the API server does. Independent of the schema engine (crd/schema); crd/compile.ts calls
 * compileRules() when it loads a CRD and evaluate() after its own OpenAPI validation.
 */

export { aggregateMessage, FieldError, OMIT_VALUE } from '../apimachinery/field-error.ts';
export { type CompiledRules, type CompileOptions, type CompileResult, compileRules } from './compile.ts';
export { type CelEnvironment, createCelEnvironment } from './environment.ts';
export { type EvaluateOptions, type EvaluateResult, evaluate } from './evaluate.ts';
export { type ExpressionResult, evaluateExpression } from './expression.ts';
export { PER_CALL_LIMIT, RUNTIME_COST_BUDGET, STATIC_ESTIMATED_COST_LIMIT } from './limits.ts';
