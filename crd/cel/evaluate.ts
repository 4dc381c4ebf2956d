/**
 * Evaluates compiled x-kubernetes-validations rules against an object (and its old version on update), the way
 * the API server's CEL validator does: self bound per schema node, null values skipped, transition rules only with
 * an old value, optionalOldSelf, message/messageExpression/reason/fieldPath, ratcheting, cost limits.
 * Source: k8s.io/apiextensions-apiserver@v0.37.2/pkg/apiserver/schema/cel/validation.go.
 */
import { Optional } from '@marcbachmann/cel-js';
import type { JSONSchemaProps, ValidationRule } from '../apiextensions.ts';
import { FieldError, NIL_PATH, OMIT_VALUE } from '../apimachinery/field-error.ts';
import { childPath, indexPath, keyPath } from '../apimachinery/field-path.ts';
import { goQuote } from '../apimachinery/go-format.ts';
import { WarningList } from '../apimachinery/warning-list.ts';
import { jsonEqual, ownValue } from '../json-value.ts';
import type { RuleProgram } from './check.ts';
import type { CompiledNode, CompiledRule, CompiledRules } from './compile.ts';
import { PER_CALL_LIMIT, RUNTIME_COST_BUDGET } from './limits.ts';
import { unchanged } from './ratchet-equality.ts';
import { CostLimitExceeded, runtimeErrorText } from './runtime-errors.ts';
import { CelValueError, firstInvalidData, InvalidData } from './values.ts';

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
  /** The node's schema: what it declares correlates (ratchet-equality.ts). */
  schema: JSONSchemaProps | undefined;
}
interface Ratchet {
  current?: Correlation;
  parent?: Correlation;
}

function correlationEqual(c: Correlation | undefined): boolean {
  return c !== undefined && unchanged(c.value, c.old, c.schema);
}

function shouldRatchet(r: Ratchet): boolean {
  return r.current ? correlationEqual(r.current) : correlationEqual(r.parent);
}

function ratchetKey(r: Ratchet, key: string, value: unknown, schema: JSONSchemaProps | undefined): Ratchet {
  if (!r.current) return r;
  if (r.parent === undefined && (key === 'apiVersion' || key === 'kind')) return {};
  const old = r.current.old;
  const oldValue = old && typeof old === 'object' && !Array.isArray(old) ? ownValue(old, key) : undefined;
  return { current: oldValue === undefined ? undefined : { value, old: oldValue, schema }, parent: r.current };
}

function ratchetIndex(r: Ratchet, oldItem: unknown, value: unknown, schema: JSONSchemaProps | undefined): Ratchet {
  if (!r.current) return r;
  return { current: oldItem === undefined ? undefined : { value, old: oldItem, schema }, parent: r.current };
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
    (o) => o && typeof o === 'object' && keys.every((k) => jsonEqual(ownValue(o, k), ownValue(item, k))),
  );
}

/** A value the walk visits: its path, its old value (for oldSelf) and its correlation for ratcheting. */
interface Visit {
  path: string;
  value: unknown;
  old: unknown;
  ratchet: Ratchet;
}

/** Validates the value and the values below it; returns false when evaluation must stop (budget exhausted). */
function validate(run: Run, node: CompiledNode | undefined, at: Visit): boolean {
  const obj = at.value;
  if (!node || obj === null || obj === undefined) return true;
  if (!validateExpressions(run, node, at)) return false;
  if (Array.isArray(obj)) return node.items ? validateItems(run, node, obj, at) : true;
  if (typeof obj === 'object') return validateFields(run, node, obj as Record<string, unknown>, at);
  return true;
}

function validateItems(run: Run, node: CompiledNode, list: unknown[], at: Visit): boolean {
  const oldList = Array.isArray(at.old) ? at.old : undefined;
  for (let i = 0; i < list.length; i++) {
    const value = list[i];
    const old = oldItemFor(node, value, oldList);
    const ratchet = ratchetIndex(at.ratchet, old, value, node.items?.schema);
    const item = { path: indexPath(at.path, i), value, old, ratchet };
    if (!validate(run, node.items, item)) return false;
  }
  return true;
}

function validateFields(run: Run, node: CompiledNode, record: Record<string, unknown>, at: Visit): boolean {
  const old = at.old;
  const oldRecord =
    old && typeof old === 'object' && !Array.isArray(old) ? (old as Record<string, unknown>) : undefined;
  const correlatable = node.mapCorrelatable;
  if (node.additionalProperties) {
    for (const [k, value] of Object.entries(record)) {
      const entry = {
        path: keyPath(at.path, k),
        value,
        old: correlatable && oldRecord ? ownValue(oldRecord, k) : undefined,
        ratchet: ratchetKey(at.ratchet, k, value, node.additionalProperties.schema),
      };
      if (!validate(run, node.additionalProperties, entry)) return false;
    }
  }
  for (const [k, sub] of node.properties) {
    if (!Object.hasOwn(record, k)) continue;
    const value = record[k];
    const field = {
      path: childPath(at.path, k),
      value,
      old: correlatable && oldRecord ? ownValue(oldRecord, k) : undefined,
      ratchet: ratchetKey(at.ratchet, k, value, sub?.schema),
    };
    if (!validate(run, sub, field)) return false;
  }
  return true;
}

/** The rules of one node evaluating against one value. */
interface NodeEvaluation {
  run: Run;
  node: CompiledNode;
  at: Visit;
  /** The path errors print: the object root is a nil *field.Path in the API server's validator, printed <nil>. */
  shown: string;
  self: unknown;
  oldSelf: unknown;
}

/** What running a program gave: its result or failure, and the cost to charge. */
interface ProgramRun {
  result: unknown;
  failure: unknown;
  cost: number;
}

/** Runs a program within the per-call limit; charged what it evaluated if tracked, else its static cost. */
function runProgram(
  run: Run,
  program: RuleProgram,
  activation: Record<string, unknown>,
  staticCost: number,
): ProgramRun {
  const counter = program.counter;
  if (counter) {
    counter.cost = 0;
    counter.limit = run.options.perCallLimit;
  }
  let result: unknown;
  let failure: unknown;
  try {
    result = program.run(activation);
  } catch (error) {
    failure = error;
  }
  // the library's error absorption (`||`, exists) may have swallowed the interruption
  if (counter && counter.cost > counter.limit) failure = new CostLimitExceeded();
  return { result, failure, cost: counter ? counter.cost : staticCost };
}

/** Marks the budget spent: no further rule runs. */
function stop(run: Run, error?: FieldError): false {
  if (error) run.errors.push(error);
  run.budget = -1;
  return false;
}

/**
 * A node's value as its rules see it. A wrong-typed scalar (or a byte string that does not decode) is
 * an error value the API server's rules meet only where they read it (`true || self == 'a'` passes).
 */
function celValueOf(node: CompiledNode, value: unknown): unknown {
  try {
    return node.convert(value);
  } catch (error) {
    if (error instanceof CelValueError && error.evaluating) return new InvalidData(error.message);
    throw error;
  }
}

/** Returns false when evaluation must stop (budget exhausted). */
function validateExpressions(run: Run, node: CompiledNode, at: Visit): boolean {
  if (node.rules.length === 0) return true;
  const shown = at.path === '' ? NIL_PATH : at.path;
  const type = node.schemaType;
  if (run.budget <= 0) return stop(run, outOfBudget(shown, type));
  let self: unknown;
  let oldSelf: unknown;
  try {
    self = celValueOf(node, at.value);
    oldSelf = !node.usesOldSelf || at.old === undefined || at.old === null ? undefined : celValueOf(node, at.old);
  } catch (error) {
    if (!(error instanceof CelValueError)) throw error;
    run.errors.push(new FieldError('FieldValueInvalid', shown, type, error.message));
    return true;
  }
  const evaluation: NodeEvaluation = { run, node, at, shown, self, oldSelf };
  for (const compiled of node.rules) {
    if (!evaluateRule(evaluation, compiled)) return false;
  }
  return true;
}

/** The error of a rule whose evaluation failed (not for running over the per-call limit). */
function evaluationError(evaluation: NodeEvaluation, rule: ValidationRule, text: string): FieldError {
  const { shown, node } = evaluation;
  const detail = text.startsWith('no such overload')
    ? `'${text}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(rule)}`
    : `${text} evaluating rule: ${ruleErrorString(rule)}`;
  return new FieldError('FieldValueInvalid', shown, node.schemaType, detail);
}

/** The error value the rule read, when its failure is the library meeting one (see values.ts InvalidData). */
function invalidDataMet(failure: unknown, activation: Record<string, unknown>): string | undefined {
  const summary = (failure as { summary?: string } | null)?.summary ?? '';
  if (!summary.startsWith('Unsupported type: InvalidData')) return undefined;
  return (firstInvalidData(activation.self) ?? firstInvalidData(activation.oldSelf))?.message;
}

/** Evaluates one rule; returns false when evaluation must stop. */
function evaluateRule(evaluation: NodeEvaluation, compiled: CompiledRule): boolean {
  const { run, shown, self, oldSelf } = evaluation;
  const type = evaluation.node.schemaType;
  const rule = compiled.rule;
  if (compiled.error !== undefined) {
    run.errors.push(new FieldError('FieldValueInvalid', shown, type, `rule compile error: ${compiled.error}`));
    return true;
  }
  const program = compiled.program;
  if (!program) return true;
  const optionalOldSelf = rule.optionalOldSelf === true;
  if (compiled.usesOldSelf && oldSelf === undefined && !optionalOldSelf) return true;
  const activation: Record<string, unknown> = { self };
  if (optionalOldSelf) activation.oldSelf = oldSelf === undefined ? Optional.none() : Optional.of(oldSelf);
  else if (oldSelf !== undefined) activation.oldSelf = oldSelf;
  const { result, failure, cost } = runProgram(run, program, activation, compiled.staticCost);
  if (cost > run.budget) return stop(run, outOfBudget(shown, type));
  run.budget -= cost;
  if (failure !== undefined) {
    const text = invalidDataMet(failure, activation) ?? runtimeErrorText(failure);
    if (!(failure instanceof CostLimitExceeded)) {
      run.errors.push(evaluationError(evaluation, rule, text));
      return true;
    }
    const detail = `'${text}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(rule)}`;
    return stop(run, new FieldError('FieldValueInvalid', shown, type, detail));
  }
  if (result === true) return true;
  // The API server evaluates a messageExpression with the plain activation even for an
  // optionalOldSelf rule: oldSelf is the old value itself, or absent on create.
  const messageActivation: Record<string, unknown> = optionalOldSelf
    ? { self, ...(oldSelf !== undefined && { oldSelf }) }
    : activation;
  return reportFailedRule(evaluation, compiled, messageActivation);
}

/** The error (or ratcheted warning) of a rule that evaluated to false; returns false when evaluation must stop. */
function reportFailedRule(
  evaluation: NodeEvaluation,
  compiled: CompiledRule,
  messageActivation: Record<string, unknown>,
): boolean {
  const { run, at, shown } = evaluation;
  const type = evaluation.node.schemaType;
  const rule = compiled.rule;
  const currentPath = compiled.normalizedFieldPath ? childPath(at.path, compiled.normalizedFieldPath) : shown;
  const addErr = (e: FieldError) => {
    if (run.options.ratcheting && !compiled.usesOldSelf && shouldRatchet(at.ratchet)) {
      run.warnings.push(e.toString());
    } else run.errors.push(e);
  };
  let detail: string | undefined;
  const messageExpression = compiled.messageExpression;
  if (messageExpression) {
    const message = runProgram(run, messageExpression, messageActivation, compiled.messageStaticCost);
    let stopping: string | undefined;
    if (message.cost > run.budget) {
      stopping =
        'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run';
    } else if (message.failure instanceof CostLimitExceeded) {
      stopping = `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${goQuote(rule.messageExpression ?? '')}`;
    }
    if (stopping !== undefined) {
      addErr(new FieldError('FieldValueInvalid', currentPath, type, stopping));
      return stop(run);
    }
    run.budget -= message.cost;
    // otherwise the API server logs the failure and falls back to message
    if (message.failure === undefined) detail = usableMessage(message.result);
  }
  detail ??= ruleMessageOrDefault(rule);
  const value = type === 'object' || type === 'array' ? OMIT_VALUE : at.value;
  addErr(fieldErrorForReason(currentPath, value, detail, rule.reason));
  return true;
}

/** A messageExpression's result as the message, unless it is empty, too long or has a line break. */
function usableMessage(message: unknown): string | undefined {
  if (typeof message !== 'string') return undefined;
  const trimmed = message.trim();
  if (Buffer.byteLength(trimmed) > MAX_MESSAGE_EXPRESSION_BYTES || trimmed.includes('\n') || trimmed.length === 0)
    return undefined;
  return trimmed;
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
  const ratchet: Ratchet =
    oldObject === undefined ? {} : { current: { value: object, old: oldObject, schema: compiled.root?.schema } };
  validate(run, compiled.root, { path: options.basePath ?? '', value: object, old: oldObject, ratchet });
  return { errors: run.errors, warnings: new WarningList(run.warnings).texts, remainingBudget: run.budget };
}
