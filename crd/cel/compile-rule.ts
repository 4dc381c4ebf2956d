/**
 * Compiles one x-kubernetes-validations rule against its schema node's `self` type: the rule, its estimated
 * cost with the declared sizes, its messageExpression, whether it uses oldSelf, its fieldPath.
 * Source: k8s.io/apiextensions-apiserver@v0.37.2/pkg/apiserver/schema/cel/compilation.go (Compile, compileRule).
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { JSONSchemaProps, ValidationRule } from '../apiextensions.ts';
import { type CheckedExpression, checkExpression, type RuleProgram } from './check.ts';
import { expressionCost, type SizeNode } from './cost.ts';
import { type DeclType, MAX_REQUEST_SIZE_BYTES } from './decl-types.ts';
import type { ObjectTypeTable } from './environment.ts';
import { normalizeFieldPath } from './field-path.ts';
import type { RegexCache } from './library/re2.ts';
import { CHEAP_RULE_COST, PER_CALL_LIMIT } from './limits.ts';
import { referencesVariable } from './parse.ts';
import { instrumentProgram } from './runtime-cost.ts';
import { declSizeNode } from './size-nodes.ts';

const DECLARED_VARIABLES: ReadonlySet<string> = new Set(['self', 'oldSelf']);

export interface CompiledRule {
  rule: ValidationRule;
  program?: RuleProgram;
  messageExpression?: RuleProgram;
  usesOldSelf: boolean;
  /** Estimated cost of one call with the declared sizes (no cardinality factor). */
  staticCost: number;
  /** Estimated cost of one messageExpression call with the declared sizes. */
  messageStaticCost: number;
  /** rule.fieldPath as a field path (field.Path.String()), when it is valid. */
  normalizedFieldPath?: string;
  /** An error the API server would report at admission ("rule compile error: ..."). */
  error?: string;
}

/** CompilationResult: the compiled rule and, when its messageExpression does not compile, why. */
export interface RuleCompilation {
  compiled: CompiledRule;
  messageError?: string;
}

/** What every rule of a CRD compiles against. */
export interface RuleEnvironment {
  base: Environment;
  table: ObjectTypeTable;
  regexCache: RegexCache;
  /** The nanoseconds within the current second, for the unstable selfType names. */
  clockNanos: () => number;
  /** The CRD passed the API server's CRD checks before: its rules are checked for types, not refused again. */
  deferRules?: boolean;
}

/** What the rules of one schema node compile against: `self`'s type, its sizes and how often the rules run. */
export interface RuleScope {
  schema: JSONSchemaProps;
  regexCache: RegexCache;
  /** Whether to look for what the API server refuses beyond types (see checkExpression's `refusals`). */
  refusals: boolean;
  /** `self` and `oldSelf` declared; `oldSelf` an optional for optionalOldSelf rules. */
  environment(optionalOldSelf: boolean): Environment;
  /** The names compile messages give the node's object types (see displayTypeNames). */
  typeNames(): ReadonlyMap<string, string>;
  sizes: ReadonlyMap<string, SizeNode | undefined>;
  /** How many times the node's rules may run for one object (maxCardinality). */
  maxCardinality: number;
}

/**
 * The names cel-go prints for a node's object types in its messages: the node's own type is
 * `selfType<N>` (N the clock's nanoseconds, fresh per node, so that no rule can depend on it), a
 * field's `<parent>.<field>`, a list element's `<list>.@idx`, a map value's `<map>.@elem`
 * (DeclType.MaybeAssignTypeName).
 */
function displayTypeNames(
  env: RuleEnvironment,
  decl: DeclType,
  name: string,
  out = new Map<string, string>(),
): Map<string, string> {
  if (decl.kind === 'object') {
    const registered = env.table.typeName(env.base, decl);
    if (out.has(registered)) return out;
    out.set(registered, name);
    for (const [celName, field] of decl.fields) displayTypeNames(env, field.type, `${name}.${celName}`, out);
  } else if (decl.kind === 'list') displayTypeNames(env, decl.elem, `${name}.@idx`, out);
  else if (decl.kind === 'map') displayTypeNames(env, decl.elem, `${name}.@elem`, out);
  return out;
}

/** Puts the display names into a compile message's text, never into the rule's echoed source lines. */
function withDisplayNames(message: string, names: ReadonlyMap<string, string>): string {
  if (names.size === 0) return message;
  return message
    .split('\n')
    .map((line) => (line.startsWith(' | ') ? line : line.replace(/\bObject\d+\b/g, (n) => names.get(n) ?? n)))
    .join('\n');
}

/** The scope of the rules of the node `decl` (of `schema`); `cardinality` undefined: bounded by the request size. */
export function ruleScope(
  env: RuleEnvironment,
  schema: JSONSchemaProps,
  decl: DeclType,
  cardinality: number | undefined,
): RuleScope {
  const selfType = env.table.typeName(env.base, decl);
  let names: Map<string, string> | undefined;
  let plainEnv: Environment | undefined;
  let optionalEnv: Environment | undefined;
  return {
    schema,
    regexCache: env.regexCache,
    refusals: env.deferRules !== true,
    environment(optionalOldSelf) {
      if (optionalOldSelf) {
        optionalEnv ??= env.base
          .clone()
          .registerVariable('self', selfType)
          .registerVariable('oldSelf', `optional<${selfType}>`);
        return optionalEnv;
      }
      plainEnv ??= env.base.clone().registerVariable('self', selfType).registerVariable('oldSelf', selfType);
      return plainEnv;
    },
    typeNames() {
      names ??= displayTypeNames(env, decl, `selfType${env.clockNanos()}`);
      return names;
    },
    sizes: new Map([
      ['self', declSizeNode(decl)],
      ['oldSelf', declSizeNode(decl)],
    ]),
    maxCardinality: cardinality ?? Math.floor(MAX_REQUEST_SIZE_BYTES / (decl.minSerializedSize + 1)),
  };
}

function trackCostIfExpensive(program: RuleProgram | undefined, staticCost: number): void {
  if (!program || staticCost <= CHEAP_RULE_COST) return;
  program.counter = { cost: 0, limit: PER_CALL_LIMIT };
  instrumentProgram(program.ast, program.counter);
}

function ruleError(scope: RuleScope, checked: CheckedExpression): string | undefined {
  if (checked.issue !== undefined) return `compilation failed: ${withDisplayNames(checked.issue, scope.typeNames())}`;
  if (checked.type !== 'bool') return 'cel expression must evaluate to a bool';
  if (checked.instantiationError !== undefined) return `program instantiation failed: ${checked.instantiationError}`;
  return undefined;
}

function messageExpressionError(scope: RuleScope, checked: CheckedExpression): string | undefined {
  if (checked.issue !== undefined)
    return `messageExpression compilation failed: ${withDisplayNames(checked.issue, scope.typeNames())}`;
  if (checked.type !== 'string') return 'messageExpression must evaluate to a string';
  if (checked.instantiationError !== undefined)
    return `messageExpression instantiation failed: ${checked.instantiationError}`;
  return undefined;
}

/** Compiles the messageExpression of a compiled rule into it; returns why it does not compile, if it does not. */
function compileMessageExpression(scope: RuleScope, env: Environment, compiled: CompiledRule): string | undefined {
  const source = compiled.rule.messageExpression;
  if (source === undefined || source === '') return undefined;
  const checked = checkExpression(env, source, scope.regexCache, {
    declared: DECLARED_VARIABLES,
    refusals: scope.refusals,
  });
  const error = messageExpressionError(scope, checked);
  if (error !== undefined) return error;
  compiled.messageExpression = checked.program;
  compiled.messageStaticCost = checked.program ? expressionCost(checked.program.ast, scope.sizes) : 0;
  trackCostIfExpensive(compiled.messageExpression, compiled.messageStaticCost);
  return undefined;
}

/** compileRule: a rule without source compiles to nothing (its fields' check reports it). */
export function compileRule(scope: RuleScope, rule: ValidationRule): RuleCompilation {
  const compiled: CompiledRule = { rule, usesOldSelf: false, staticCost: 0, messageStaticCost: 0 };
  const source = rule.rule ?? '';
  if (source.trim() === '') return { compiled };
  const env = scope.environment(rule.optionalOldSelf === true);
  const checked = checkExpression(env, source, scope.regexCache, {
    declared: DECLARED_VARIABLES,
    refusals: scope.refusals,
  });
  compiled.staticCost =
    checked.program && checked.type === 'bool' ? expressionCost(checked.program.ast, scope.sizes) : 0;
  // compileRule in the API server reads the checked references before it instantiates the program:
  // a rule whose program fails (a constant conversion) still uses oldSelf
  if (checked.issue === undefined && checked.type === 'bool' && checked.program)
    compiled.usesOldSelf = referencesVariable(checked.program.ast, 'oldSelf');
  const error = ruleError(scope, checked);
  if (error !== undefined) {
    compiled.error = error;
    return { compiled };
  }
  compiled.program = checked.program;
  trackCostIfExpensive(compiled.program, compiled.staticCost);
  const messageError = compileMessageExpression(scope, env, compiled);
  if (rule.fieldPath !== undefined && rule.fieldPath !== '')
    compiled.normalizedFieldPath = normalizeFieldPath(rule.fieldPath, scope.schema);
  return messageError === undefined ? { compiled } : { compiled, messageError };
}
