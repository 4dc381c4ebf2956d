/**
 * The CRD-time checks of x-kubernetes-validations rules, with the API server's error texts: a rule's own fields
 * before anything compiles, then each compile result (estimated cost against the limit, compile errors, oldSelf
 * use). Source: k8s.io/apiextensions-apiserver@v0.37.2/pkg/apis/apiextensions/validation/validation.go
 * (ValidateCustomResourceDefinitionOpenAPISchema, the x-kubernetes-validations part).
 */
import type { JSONSchemaProps, ValidationRule } from '../apiextensions.ts';
import { FieldError, fieldErrors } from '../apimachinery/field-error.ts';
import { GoStruct } from '../apimachinery/go-struct.ts';
import type { RuleCompilation } from './compile-rule.ts';
import { normalizeFieldPath } from './field-path.ts';
import { costErrorMessage, STATIC_ESTIMATED_COST_LIMIT } from './limits.ts';

/** newlineMatcher in the CRD validation (valid newline characters in the CEL grammar). */
const LINE_BREAK = /[\n\r]+/;
/** The reasons a rule may give (validation.go supportedValidationReason), in the order Go lists them. */
const SUPPORTED_REASONS: readonly string[] = [
  'FieldValueDuplicate',
  'FieldValueForbidden',
  'FieldValueInvalid',
  'FieldValueRequired',
];

const isBlank = (s: string | undefined) => (s ?? '').trim() === '';

/** The path of a node's i-th rule. */
export function rulePath(nodePath: string, index: number): string {
  return `${nodePath}.x-kubernetes-validations[${index}]`;
}

function ruleOrMessageError(rule: ValidationRule, path: string): FieldError | undefined {
  const message = rule.message ?? '';
  if (isBlank(rule.rule))
    return new FieldError('FieldValueRequired', `${path}.rule`, undefined, 'rule is not specified');
  if (message.length > 0 && message.trim() === '')
    return new FieldError('FieldValueInvalid', `${path}.message`, rule.message, 'must be non-empty if specified');
  if (LINE_BREAK.test(message.trim()))
    return new FieldError('FieldValueInvalid', `${path}.message`, rule.message, 'must not contain line breaks');
  if (LINE_BREAK.test((rule.rule ?? '').trim()) && message.trim() === '') {
    return new FieldError(
      'FieldValueRequired',
      `${path}.message`,
      undefined,
      'message must be specified if rule contains line breaks',
    );
  }
  return undefined;
}

function fieldPathErrors(rule: ValidationRule, path: string, schema: JSONSchemaProps, out: FieldError[]): void {
  const fieldPath = rule.fieldPath ?? '';
  if (fieldPath.length > 0 && fieldPath.trim() === '')
    out.push(new FieldError('FieldValueInvalid', `${path}.fieldPath`, fieldPath, 'must be non-empty if specified'));
  if (LINE_BREAK.test(fieldPath))
    out.push(new FieldError('FieldValueInvalid', `${path}.fieldPath`, fieldPath, 'must not contain line breaks'));
  if (fieldPath !== '' && normalizeFieldPath(fieldPath, schema) === undefined)
    out.push(new FieldError('FieldValueInvalid', `${path}.fieldPath`, rule.fieldPath, 'must be a valid path'));
}

/** The errors in a rule's own fields (rule, message, messageExpression, reason, fieldPath); `path` is its rulePath. */
export function ruleFieldErrors(rule: ValidationRule, path: string, schema: JSONSchemaProps): FieldError[] {
  const errors: FieldError[] = [];
  const ruleOrMessage = ruleOrMessageError(rule, path);
  if (ruleOrMessage) errors.push(ruleOrMessage);
  const messageExpression = rule.messageExpression ?? '';
  if (messageExpression.length > 0 && messageExpression.trim() === '') {
    errors.push(
      new FieldError(
        'FieldValueRequired',
        `${path}.messageExpression`,
        undefined,
        'messageExpression must be non-empty if specified',
      ),
    );
  }
  if (rule.reason !== undefined && rule.reason !== null && !SUPPORTED_REASONS.includes(rule.reason))
    errors.push(fieldErrors.notSupported(`${path}.reason`, rule.reason, SUPPORTED_REASONS));
  fieldPathErrors(rule, path, schema, errors);
  return errors;
}

/** The compile results' errors of one node, and the estimated cost of each expression by its path. */
export interface CompileFindings {
  errors: FieldError[];
  costs: Array<[path: string, cost: number]>;
}

/** Where a compiled rule sits: its rulePath, how often it runs, the uncorrelatable part of the schema it is in. */
export interface RulePlace {
  path: string;
  maxCardinality: number;
  /** The nearest node above whose children get no old values; oldSelf cannot be used below it. */
  uncorrelatablePath: string | undefined;
}

function ruleValue(rule: ValidationRule): GoStruct {
  return new GoStruct([
    ['Rule', rule.rule ?? ''],
    ['Message', rule.message ?? ''],
    ['MessageExpression', rule.messageExpression ?? ''],
    ['Reason', rule.reason ?? null],
    ['FieldPath', rule.fieldPath ?? ''],
    ['OptionalOldSelf', rule.optionalOldSelf ?? null],
  ]);
}

/** The expression's cost for all its calls, a Forbidden error when that is over the limit. */
function observeExpressionCost(out: CompileFindings, path: string, costName: string, cost: number): void {
  if (cost > STATIC_ESTIMATED_COST_LIMIT) {
    out.errors.push(
      new FieldError(
        'FieldValueForbidden',
        path,
        undefined,
        costErrorMessage(costName, cost, STATIC_ESTIMATED_COST_LIMIT),
      ),
    );
  }
  out.costs.push([path, cost]);
}

function optionalOldSelfUnused(path: string, value: boolean): FieldError {
  return new FieldError(
    'FieldValueInvalid',
    `${path}.optionalOldSelf`,
    value,
    'may not be set if oldSelf is not used in rule',
  );
}

/**
 * multiplyWithOverflowGuard in validation.go: a rule's cost times how often it may run, 0 when either is 0
 * (a list with maxItems 0 runs its items' rules never, however costly; Infinity is uint64's saturation).
 */
function costTimesCardinality(cost: number, cardinality: number): number {
  return cost === 0 || cardinality === 0 ? 0 : cost * cardinality;
}

/** The errors of one compiled rule, into `out`, in the API server's order. */
export function compiledRuleErrors(result: RuleCompilation, place: RulePlace, out: CompileFindings): void {
  const { compiled } = result;
  const rule = compiled.rule;
  // a rule not specified is an error of its fields
  if (isBlank(rule.rule)) return;
  const { path } = place;
  observeExpressionCost(
    out,
    `${path}.rule`,
    'estimated rule cost',
    costTimesCardinality(compiled.staticCost, place.maxCardinality),
  );
  if (compiled.error !== undefined) {
    out.errors.push(new FieldError('FieldValueInvalid', `${path}.rule`, ruleValue(rule), compiled.error));
  } else if (result.messageError !== undefined) {
    out.errors.push(
      new FieldError('FieldValueInvalid', `${path}.messageExpression`, ruleValue(rule), result.messageError),
    );
  } else if (rule.messageExpression !== undefined && rule.messageExpression !== '') {
    // validation.go observes MessageExpressionMaxCost as it is: one call, not times the cardinality.
    observeExpressionCost(
      out,
      `${path}.messageExpression`,
      'estimated messageExpression cost',
      compiled.messageStaticCost,
    );
  }
  if (compiled.usesOldSelf) {
    if (place.uncorrelatablePath !== undefined) {
      out.errors.push(
        new FieldError(
          'FieldValueInvalid',
          `${path}.rule`,
          rule.rule,
          `oldSelf cannot be used on the uncorrelatable portion of the schema within ${place.uncorrelatablePath}`,
        ),
      );
    }
  } else if (rule.optionalOldSelf !== undefined) {
    // a rule that does not compile uses no oldSelf, as far as the API server can tell
    out.errors.push(optionalOldSelfUnused(path, rule.optionalOldSelf));
  }
}
