/**
 * Evaluates compiled x-kubernetes-validations rules against an object (and its old version on update), the way
 * the API server's CEL validator does: self bound per schema node, null values skipped, transition rules only with
 * an old value, optionalOldSelf, message/messageExpression/reason/fieldPath, ratcheting, cost limits.
 * Source: k8s.io/apiextensions-apiserver@v0.37.2/pkg/apiserver/schema/cel/validation.go.
 */
import { Optional } from '@marcbachmann/cel-js';
import type { ValidationRule } from '../../kube/apiextensions.ts';
import { FieldError, NIL_PATH, OMIT_VALUE } from '../apimachinery/field-error.ts';
import { childPath, indexPath, keyPath } from '../apimachinery/field-path.ts';
import { goQuote } from '../apimachinery/go-format.ts';
import { jsonEqual } from '../apimachinery/json-value.ts';
import { type CompiledNode, type CompiledRules, PER_CALL_LIMIT, RUNTIME_COST_BUDGET } from './compile.ts';
import { CostLimitExceeded } from './runtime-cost.ts';
import { runtimeErrorText } from './runtime-errors.ts';
import { CelValueError } from './values.ts';

export interface EvaluateOptions {
  /** Ratchet errors of unchanged values on update (CRDValidationRatcheting, on by default). Default true. */
  ratcheting?: boolean;
  /** Per-object budget (RuntimeCELCostBudget). */
  costBudget?: number;
  /** Per-call limit (PerCallLimit). */
  perCallLimit?: number;
  /** Field path of the object root. Default '' (errors read `spec.x`). */
  basePath?: string;
}

export interface EvaluateResult {
  errors: FieldError[];
  /** Ratcheted errors as the API server returns them in Warning headers (field.Error.Error()). */
  warnings: string[];
  remainingBudget: number;
}

const MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024;
/** Correlation of a node with its old value for ratcheting (common.CorrelatedObject). */
interface Correlation {
  value: unknown;
  old: unknown;
}
interface Ratchet {
  current?: Correlation;
  parent?: Correlation;
}

function correlationEqual(c: Correlation | undefined): boolean {
  if (!c) return false;
  if (c.value === undefined && c.old === undefined) return true;
  if (c.value === undefined || c.old === undefined) return false;
  return jsonEqual(c.value, c.old);
}

function shouldRatchet(r: Ratchet): boolean {
  return r.current ? correlationEqual(r.current) : correlationEqual(r.parent);
}

function ratchetKey(r: Ratchet, key: string, value: unknown): Ratchet {
  if (!r.current) return r;
  if (r.parent === undefined && (key === 'apiVersion' || key === 'kind')) return {};
  const old = r.current.old;
  const oldValue =
    old && typeof old === 'object' && !Array.isArray(old) ? (old as Record<string, unknown>)[key] : undefined;
  return { current: oldValue === undefined ? undefined : { value, old: oldValue }, parent: r.current };
}

function ratchetIndex(r: Ratchet, oldItem: unknown, value: unknown): Ratchet {
  if (!r.current) return r;
  return { current: oldItem === undefined ? undefined : { value, old: oldItem }, parent: r.current };
}

function ruleErrorString(rule: ValidationRule): string {
  return (rule.message ?? '').length > 0 ? (rule.message ?? '').trim() : (rule.rule ?? '').trim();
}

function ruleMessageOrDefault(rule: ValidationRule): string {
  return (rule.message ?? '').length === 0 ? `failed rule: ${ruleErrorString(rule)}` : (rule.message ?? '').trim();
}

function outOfBudget(path: string, schemaType: string): FieldError {
  return new FieldError(
    'FieldValueInvalid',
    path,
    schemaType,
    'validation failed due to running out of cost budget, no further validation rules will be run',
  );
}

function fieldErrorForReason(
  path: string,
  value: unknown,
  detail: string,
  reason: ValidationRule['reason'],
): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return new FieldError('FieldValueForbidden', path, undefined, detail);
    case 'FieldValueRequired':
      return new FieldError('FieldValueRequired', path, undefined, detail);
    case 'FieldValueDuplicate':
      return new FieldError('FieldValueDuplicate', path, value, '');
    default:
      return new FieldError('FieldValueInvalid', path, value, detail);
  }
}

interface Run {
  options: Required<Omit<EvaluateOptions, 'basePath'>>;
  compiled: CompiledRules;
  errors: FieldError[];
  warnings: string[];
  budget: number;
}

/** Map-type lists correlate old items by their keys (makeMapList). */
function oldItemFor(node: CompiledNode, item: unknown, oldList: unknown[] | undefined): unknown {
  const schema = node.decl.schema;
  if (!oldList || schema['x-kubernetes-list-type'] !== 'map') return undefined;
  const keys = schema['x-kubernetes-list-map-keys'] ?? [];
  if (!item || typeof item !== 'object') return undefined;
  return oldList.find(
    (o) =>
      o &&
      typeof o === 'object' &&
      keys.every((k) => jsonEqual((o as Record<string, unknown>)[k], (item as Record<string, unknown>)[k])),
  );
}

function validate(
  run: Run,
  node: CompiledNode | undefined,
  path: string,
  obj: unknown,
  oldObj: unknown,
  ratchet: Ratchet,
): boolean {
  if (!node || obj === null || obj === undefined) return true;
  if (!validateExpressions(run, node, path, obj, oldObj, ratchet)) return false;
  if (Array.isArray(obj)) {
    if (!node.items) return true;
    const oldList = Array.isArray(oldObj) ? oldObj : undefined;
    for (let i = 0; i < obj.length; i++) {
      const oldItem = oldItemFor(node, obj[i], oldList);
      if (!validate(run, node.items, indexPath(path, i), obj[i], oldItem, ratchetIndex(ratchet, oldItem, obj[i])))
        return false;
    }
    return true;
  }
  if (typeof obj === 'object') {
    const record = obj as Record<string, unknown>;
    const oldRecord =
      oldObj && typeof oldObj === 'object' && !Array.isArray(oldObj) ? (oldObj as Record<string, unknown>) : undefined;
    const correlatable = node.mapCorrelatable;
    if (node.additionalProperties) {
      for (const [k, v] of Object.entries(record)) {
        const oldV = correlatable ? oldRecord?.[k] : undefined;
        if (!validate(run, node.additionalProperties, keyPath(path, k), v, oldV, ratchetKey(ratchet, k, v)))
          return false;
      }
    }
    for (const [k, sub] of node.properties) {
      if (!Object.hasOwn(record, k)) continue;
      const v = record[k];
      const oldV = correlatable ? oldRecord?.[k] : undefined;
      if (!validate(run, sub, childPath(path, k), v, oldV, ratchetKey(ratchet, k, v))) return false;
    }
  }
  return true;
}

/** Returns false when evaluation must stop (budget exhausted). */
function validateExpressions(
  run: Run,
  node: CompiledNode,
  path: string,
  obj: unknown,
  oldObj: unknown,
  ratchet: Ratchet,
): boolean {
  const rules = node.rules;
  // The object root is a nil *field.Path in the API server's validator, which prints as <nil>.
  const shown = path === '' ? NIL_PATH : path;
  if (rules.length === 0) return true;
  const type = node.schemaType;
  if (run.budget <= 0) {
    run.errors.push(outOfBudget(shown, type));
    run.budget = -1;
    return false;
  }
  let self: unknown;
  let oldSelf: unknown;
  try {
    self = node.convert(obj);
    oldSelf = !node.usesOldSelf || oldObj === undefined || oldObj === null ? undefined : node.convert(oldObj);
  } catch (error) {
    if (!(error instanceof CelValueError)) throw error;
    run.errors.push(new FieldError('FieldValueInvalid', shown, type, error.message));
    return true;
  }
  for (const compiled of rules) {
    const rule = compiled.rule;
    if (compiled.error !== undefined) {
      run.errors.push(new FieldError('FieldValueInvalid', shown, type, `rule compile error: ${compiled.error}`));
      continue;
    }
    const program = compiled.program;
    if (!program) continue;
    const optionalOldSelf = rule.optionalOldSelf === true;
    if (compiled.usesOldSelf && oldSelf === undefined && !optionalOldSelf) continue;
    const activation: Record<string, unknown> = { self };
    if (optionalOldSelf) activation.oldSelf = oldSelf === undefined ? Optional.none() : Optional.of(oldSelf);
    else if (oldSelf !== undefined) activation.oldSelf = oldSelf;

    let result: unknown;
    let failure: unknown;
    if (program.counter) {
      program.counter.cost = 0;
      program.counter.limit = run.options.perCallLimit;
    }
    try {
      result = program.run(activation);
    } catch (error) {
      failure = error;
    }
    // the library's error absorption (`||`, exists) may have swallowed the interruption
    if (program.counter && program.counter.cost > program.counter.limit) failure = new CostLimitExceeded();
    const cost = program.counter ? program.counter.cost : compiled.staticCost;
    if (cost > run.budget) {
      run.errors.push(outOfBudget(shown, type));
      run.budget = -1;
      return false;
    }
    run.budget -= cost;
    if (failure !== undefined) {
      const text = runtimeErrorText(failure);
      if (failure instanceof CostLimitExceeded) {
        run.errors.push(
          new FieldError(
            'FieldValueInvalid',
            shown,
            type,
            `'${text}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(rule)}`,
          ),
        );
        run.budget = -1;
        return false;
      }
      if (text.startsWith('no such overload')) {
        run.errors.push(
          new FieldError(
            'FieldValueInvalid',
            shown,
            type,
            `'${text}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(rule)}`,
          ),
        );
      } else {
        run.errors.push(
          new FieldError('FieldValueInvalid', shown, type, `${text} evaluating rule: ${ruleErrorString(rule)}`),
        );
      }
      continue;
    }
    if (result === true) continue;

    const currentPath = compiled.normalizedFieldPath ? childPath(path, compiled.normalizedFieldPath) : shown;
    const addErr = (e: FieldError) => {
      if (run.options.ratcheting && !compiled.usesOldSelf && shouldRatchet(ratchet)) {
        run.warnings.push(e.toString());
      } else run.errors.push(e);
    };
    let detail: string | undefined;
    // The API server evaluates a messageExpression with the plain activation even for an
    // optionalOldSelf rule: oldSelf is the old value itself, or absent on create.
    const messageActivation: Record<string, unknown> = optionalOldSelf
      ? { self, ...(oldSelf !== undefined && { oldSelf }) }
      : activation;
    const messageExpression = compiled.messageExpression;
    if (messageExpression) {
      if (messageExpression.counter) {
        messageExpression.counter.cost = 0;
        messageExpression.counter.limit = run.options.perCallLimit;
      }
      let message: unknown;
      let failure: unknown;
      try {
        message = messageExpression.run(messageActivation);
      } catch (error) {
        failure = error;
      }
      if (messageExpression.counter && messageExpression.counter.cost > messageExpression.counter.limit)
        failure = new CostLimitExceeded();
      const cost = messageExpression.counter ? messageExpression.counter.cost : compiled.messageStaticCost;
      if (cost > run.budget) {
        addErr(
          new FieldError(
            'FieldValueInvalid',
            currentPath,
            type,
            'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run',
          ),
        );
        run.budget = -1;
        return false;
      }
      if (failure instanceof CostLimitExceeded) {
        addErr(
          new FieldError(
            'FieldValueInvalid',
            currentPath,
            type,
            `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${goQuote(rule.messageExpression ?? '')}`,
          ),
        );
        run.budget = -1;
        return false;
      }
      run.budget -= cost;
      if (failure === undefined && typeof message === 'string') {
        const trimmed = message.trim();
        if (
          Buffer.byteLength(trimmed) <= MAX_MESSAGE_EXPRESSION_BYTES &&
          !trimmed.includes('\n') &&
          trimmed.length > 0
        ) {
          detail = trimmed;
        }
      }
      // otherwise the API server logs the failure and falls back to message
    }
    detail ??= ruleMessageOrDefault(rule);
    const value = type === 'object' || type === 'array' ? OMIT_VALUE : obj;
    addErr(fieldErrorForReason(currentPath, value, detail, rule.reason));
  }
  return true;
}

/**
 * Evaluates every compiled rule against `object` (with `oldObject` on update). Errors are field errors with
 * the API server's paths and texts; ratcheted errors are returned as warnings.
 */
export function evaluate(
  compiled: CompiledRules,
  object: unknown,
  oldObject?: unknown,
  options: EvaluateOptions = {},
): EvaluateResult {
  const run: Run = {
    options: {
      ratcheting: options.ratcheting ?? true,
      costBudget: options.costBudget ?? RUNTIME_COST_BUDGET,
      perCallLimit: options.perCallLimit ?? PER_CALL_LIMIT,
    },
    compiled,
    errors: [],
    warnings: [],
    budget: options.costBudget ?? RUNTIME_COST_BUDGET,
  };
  const ratchet: Ratchet = oldObject === undefined ? {} : { current: { value: object, old: oldObject } };
  validate(run, compiled.root, options.basePath ?? '', object, oldObject, ratchet);
  return { errors: run.errors, warnings: run.warnings, remainingBudget: run.budget };
}
