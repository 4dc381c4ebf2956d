/**
 * Compiles every x-kubernetes-validations rule of a structural schema, as the API server does when a CRD is
 * written: per-node `self` types, type checking, regex literals, the estimated cost budget, messageExpression,
 * fieldPath and optionalOldSelf checks, with the API server's error texts.
 * Sources: k8s.io/apiextensions-apiserver@v0.37.2/pkg/apiserver/schema/cel/compilation.go and validation.go;
 * pkg/apis/apiextensions/validation/validation.go (CRD-time messages, cost limits).
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { JSONSchemaProps, ValidationRule } from '../../kube/apiextensions.ts';
import { append } from '../apimachinery/append.ts';
import { FieldError, fieldErrors } from '../apimachinery/field-error.ts';
import { GoStruct } from '../apimachinery/go-struct.ts';
import { checkExpression, type RuleProgram } from './check.ts';
import { expressionCost } from './cost.ts';
import { type DeclType, MAX_REQUEST_SIZE_BYTES, schemaDeclType } from './decl-types.ts';
import { type CelEnvironment, createCelEnvironment, ObjectTypeTable } from './environment.ts';
import { normalizeFieldPath } from './field-path.ts';
import type { RegexCache } from './library/re2.ts';
import { referencesVariable } from './parse.ts';
import { instrumentProgram } from './runtime-cost.ts';
import { declSizeNode } from './size-nodes.ts';
import { converterFor, type ValueConverter } from './values.ts';

const DECLARED_VARIABLES: ReadonlySet<string> = new Set(['self', 'oldSelf']);
/** newlineMatcher in the CRD validation (valid newline characters in the CEL grammar). */
const LINE_BREAK = /[\n\r]+/;
/** The reasons a rule may give (validation.go supportedValidationReason), in the order Go lists them. */
const SUPPORTED_REASONS: readonly string[] = [
  'FieldValueDuplicate',
  'FieldValueForbidden',
  'FieldValueInvalid',
  'FieldValueRequired',
];

/** celconfig.PerCallLimit. */
export const PER_CALL_LIMIT = 1_000_000;
/** celconfig.RuntimeCELCostBudget. */
export const RUNTIME_COST_BUDGET = 10_000_000;
/** StaticEstimatedCostLimit. */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;

export type { RuleProgram } from './check.ts';

/**
 * Rules whose estimate with the declared sizes is at most this are charged that estimate; costlier rules are
 * instrumented and charged what they actually evaluate.
 */
export const CHEAP_RULE_COST = 10_000;

function trackCostIfExpensive(program: RuleProgram | undefined, staticCost: number): void {
  if (!program || staticCost <= CHEAP_RULE_COST) return;
  program.counter = { cost: 0, limit: PER_CALL_LIMIT };
  instrumentProgram(program.ast, program.counter);
}

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

export interface CompiledNode {
  decl: DeclType;
  /** JSON -> CEL value for this node's type. */
  convert: ValueConverter;
  /** Whether any rule of this node uses oldSelf (only then is the old value converted). */
  usesOldSelf: boolean;
  /** MapIsCorrelatable(x-kubernetes-map-type): whether children get their old values. */
  mapCorrelatable: boolean;
  /** The schema's `type` (printed as the value of CEL field errors). */
  schemaType: string;
  resourceRoot: boolean;
  rules: CompiledRule[];
  properties: Map<string, CompiledNode>;
  items?: CompiledNode;
  additionalProperties?: CompiledNode;
}

export interface CompiledRules {
  root?: CompiledNode;
  objectClasses: ObjectTypeTable;
}

export interface CompileOptions {
  /** Path prefix of CRD-time errors. Default `openAPIV3Schema`; the API server reports `spec.validation.openAPIV3Schema` or `spec.versions[i].schema.openAPIV3Schema`. */
  basePath?: string;
  /** Whether the root is a resource root (only apiVersion, kind, metadata.name/generateName visible). Default true. */
  isResourceRoot?: boolean;
  /** The library environment to build on; create one with createCelEnvironment() and share it across CRDs. */
  environment?: CelEnvironment;
  /** The N of the `selfType<N>` names in messages (the API server's clock nanoseconds). Default: this clock's. */
  clockNanos?: () => number;
  /**
   * False: only the errors the API server reports without compiling (reason, fieldPath, message
   * checks), as it does when the schema's defaults are invalid. Default true.
   */
  compileExpressions?: boolean;
}

export interface CompileResult {
  compiled: CompiledRules;
  /** Errors the API server reports when the CRD is created or updated. */
  errors: FieldError[];
}

/** TotalCost in the CRD validation: the sum of all estimated costs and the four most expensive contributions. */
interface TotalCost {
  total: number;
  mostExpensive: Array<{ path: string; cost: number }>;
}

/** StaticEstimatedCRDCostLimit. */
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;

function observeCost(total: TotalCost, path: string, cost: number): void {
  total.total += cost;
  if (cost < STATIC_ESTIMATED_CRD_COST_LIMIT / 100) return;
  total.mostExpensive.push({ path, cost });
  total.mostExpensive.sort((a, b) => b.cost - a.cost);
  total.mostExpensive.splice(4);
}

interface Ctx {
  totalCost: TotalCost;
  /** The nanoseconds within the current second, for the unstable selfType names. */
  clockNanos: () => number;
  /** False: report only the rules' own field errors (the API server's nil CEL context). */
  compileExpressions: boolean;
  /** The rules' own field errors found so far, for the nodes above to know of those below. */
  schemaErrorCount: number;
  /** Nodes whose list type refuses their items (schema errors too, wherever the rules are). */
  listTypeErrorPaths: readonly string[];
  base: Environment;
  table: ObjectTypeTable;
  regexCache: RegexCache;
  errors: FieldError[];
}

/**
 * The names cel-go prints for a node's object types in its messages: the node's own type is
 * `selfType<N>` (N the clock's nanoseconds, fresh per node, so that no rule can depend on it), a
 * field's `<parent>.<field>`, a list element's `<list>.@idx`, a map value's `<map>.@elem`
 * (DeclType.MaybeAssignTypeName, apiextensions-apiserver schema/cel/compilation.go).
 */
function displayTypeNames(
  ctx: Ctx,
  decl: DeclType,
  name: string,
  out = new Map<string, string>(),
): Map<string, string> {
  if (decl.kind === 'object') {
    const registered = ctx.table.typeName(ctx.base, decl);
    if (out.has(registered)) return out;
    out.set(registered, name);
    for (const [celName, field] of decl.fields) displayTypeNames(ctx, field.type, `${name}.${celName}`, out);
  } else if (decl.kind === 'list') displayTypeNames(ctx, decl.elem, `${name}.@idx`, out);
  else if (decl.kind === 'map') displayTypeNames(ctx, decl.elem, `${name}.@elem`, out);
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

function registerAllObjectTypes(env: Environment, table: ObjectTypeTable, decl: DeclType | undefined): void {
  if (!decl) return;
  table.typeName(env, decl);
}

function hasRules(s: JSONSchemaProps | undefined): boolean {
  if (!s) return false;
  if ((s['x-kubernetes-validations'] ?? []).length > 0) return true;
  if (hasRules(s.items)) return true;
  if (typeof s.additionalProperties === 'object' && hasRules(s.additionalProperties)) return true;
  return Object.values(s.properties ?? {}).some(hasRules);
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

/** getCostErrorMessage in validation.go. */
export function costErrorMessage(costName: string, cost: number, limit: number): string {
  const factor = cost / limit;
  let text: string;
  if (factor > 100) text = 'more than 100x';
  else if (factor < 1.5) text = `${factor.toFixed(6)}x`;
  else text = `${factor.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${text} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

function compileNode(
  ctx: Ctx,
  schema: JSONSchemaProps,
  decl: DeclType,
  resourceRoot: boolean,
  path: string,
  cardinality: number | undefined,
  uncorrelatablePath: string | undefined,
): CompiledNode | undefined {
  const rules = schema['x-kubernetes-validations'] ?? [];
  const compiledRules: CompiledRule[] = [];
  // The rules' own field errors; compile and cost errors and costs count only when neither this
  // node nor any node below it has such errors (the API server validates the children first, and
  // compiles a node's rules only when its schema errors, its children's included, are none).
  const schemaErrors: FieldError[] = [];
  const celErrors: FieldError[] = [];
  const costs: Array<[string, number]> = [];
  const schemaErrorsBefore = ctx.schemaErrorCount;
  if (rules.length > 0) {
    const selfType = ctx.table.typeName(ctx.base, decl);
    let names: Map<string, string> | undefined;
    const typeNames = () => {
      names ??= displayTypeNames(ctx, decl, `selfType${ctx.clockNanos()}`);
      return names;
    };
    let plainEnv: Environment | undefined;
    let optionalEnv: Environment | undefined;
    const envFor = (optional: boolean) => {
      if (optional) {
        optionalEnv ??= ctx.base
          .clone()
          .registerVariable('self', selfType)
          .registerVariable('oldSelf', `optional<${selfType}>`);
        return optionalEnv;
      }
      plainEnv ??= ctx.base.clone().registerVariable('self', selfType).registerVariable('oldSelf', selfType);
      return plainEnv;
    };
    const maxCardinality = cardinality ?? Math.floor(MAX_REQUEST_SIZE_BYTES / (decl.minSerializedSize + 1));
    const sizes = new Map([
      ['self', declSizeNode(decl)],
      ['oldSelf', declSizeNode(decl)],
    ]);
    rules.forEach((rule, i) => {
      const rulePath = `${path}.x-kubernetes-validations[${i}]`;
      const source = rule.rule ?? '';
      if (source.trim() === '') {
        schemaErrors.push(new FieldError('FieldValueRequired', `${rulePath}.rule`, undefined, 'rule is not specified'));
      } else if ((rule.message ?? '').length > 0 && (rule.message ?? '').trim() === '') {
        schemaErrors.push(
          new FieldError('FieldValueInvalid', `${rulePath}.message`, rule.message, 'must be non-empty if specified'),
        );
      } else if (LINE_BREAK.test((rule.message ?? '').trim())) {
        schemaErrors.push(
          new FieldError('FieldValueInvalid', `${rulePath}.message`, rule.message, 'must not contain line breaks'),
        );
      } else if (LINE_BREAK.test(source.trim()) && (rule.message ?? '').trim() === '') {
        schemaErrors.push(
          new FieldError(
            'FieldValueRequired',
            `${rulePath}.message`,
            undefined,
            'message must be specified if rule contains line breaks',
          ),
        );
      }
      if ((rule.messageExpression ?? '').length > 0 && (rule.messageExpression ?? '').trim() === '') {
        schemaErrors.push(
          new FieldError(
            'FieldValueRequired',
            `${rulePath}.messageExpression`,
            undefined,
            'messageExpression must be non-empty if specified',
          ),
        );
      }
      if (rule.reason !== undefined && rule.reason !== null && !SUPPORTED_REASONS.includes(rule.reason)) {
        schemaErrors.push(fieldErrors.notSupported(`${rulePath}.reason`, rule.reason, SUPPORTED_REASONS));
      }
      const fieldPath = rule.fieldPath ?? '';
      if (fieldPath.length > 0 && fieldPath.trim() === '') {
        schemaErrors.push(
          new FieldError('FieldValueInvalid', `${rulePath}.fieldPath`, fieldPath, 'must be non-empty if specified'),
        );
      }
      if (LINE_BREAK.test(fieldPath)) {
        schemaErrors.push(
          new FieldError('FieldValueInvalid', `${rulePath}.fieldPath`, fieldPath, 'must not contain line breaks'),
        );
      }
      if (fieldPath !== '' && normalizeFieldPath(fieldPath, schema) === undefined) {
        schemaErrors.push(
          new FieldError('FieldValueInvalid', `${rulePath}.fieldPath`, rule.fieldPath, 'must be a valid path'),
        );
      }
    });
    rules.forEach((rule, i) => {
      const rulePath = `${path}.x-kubernetes-validations[${i}]`;
      const compiled: CompiledRule = { rule, usesOldSelf: false, staticCost: 0, messageStaticCost: 0 };
      compiledRules.push(compiled);
      const source = rule.rule ?? '';
      if (source.trim() === '') return;
      const env = envFor(rule.optionalOldSelf === true);
      const checked = checkExpression(env, source, ctx.regexCache, DECLARED_VARIABLES);
      compiled.staticCost = checked.program && checked.type === 'bool' ? expressionCost(checked.program.ast, sizes) : 0;
      const cost = compiled.staticCost * maxCardinality;
      if (cost > STATIC_ESTIMATED_COST_LIMIT) {
        celErrors.push(
          new FieldError(
            'FieldValueForbidden',
            `${rulePath}.rule`,
            undefined,
            costErrorMessage('estimated rule cost', cost, STATIC_ESTIMATED_COST_LIMIT),
          ),
        );
      }
      costs.push([`${rulePath}.rule`, cost]);
      if (checked.issue !== undefined)
        compiled.error = `compilation failed: ${withDisplayNames(checked.issue, typeNames())}`;
      else if (checked.type !== 'bool') compiled.error = 'cel expression must evaluate to a bool';
      else if (checked.instantiationError !== undefined)
        compiled.error = `program instantiation failed: ${checked.instantiationError}`;
      if (compiled.error !== undefined) {
        celErrors.push(new FieldError('FieldValueInvalid', `${rulePath}.rule`, ruleValue(rule), compiled.error));
        // A rule that does not compile uses no oldSelf, as far as the API server can tell.
        if (rule.optionalOldSelf !== undefined) celErrors.push(optionalOldSelfUnused(rulePath, rule.optionalOldSelf));
        return;
      }
      compiled.program = checked.program;
      trackCostIfExpensive(compiled.program, compiled.staticCost);
      compiled.usesOldSelf = checked.program ? referencesVariable(checked.program.ast, 'oldSelf') : false;
      if (rule.messageExpression !== undefined && rule.messageExpression !== '') {
        const message = checkExpression(env, rule.messageExpression, ctx.regexCache, DECLARED_VARIABLES);
        let messageError: string | undefined;
        if (message.issue !== undefined)
          messageError = `messageExpression compilation failed: ${withDisplayNames(message.issue, typeNames())}`;
        else if (message.type !== 'string') messageError = 'messageExpression must evaluate to a string';
        else if (message.instantiationError !== undefined) {
          messageError = `messageExpression instantiation failed: ${message.instantiationError}`;
        }
        if (messageError !== undefined) {
          celErrors.push(
            new FieldError('FieldValueInvalid', `${rulePath}.messageExpression`, ruleValue(rule), messageError),
          );
        } else {
          compiled.messageExpression = message.program;
          compiled.messageStaticCost = message.program ? expressionCost(message.program.ast, sizes) : 0;
          trackCostIfExpensive(compiled.messageExpression, compiled.messageStaticCost);
          const messageCost = compiled.messageStaticCost * maxCardinality;
          if (messageCost > STATIC_ESTIMATED_COST_LIMIT) {
            celErrors.push(
              new FieldError(
                'FieldValueForbidden',
                `${rulePath}.messageExpression`,
                undefined,
                costErrorMessage('estimated messageExpression cost', messageCost, STATIC_ESTIMATED_COST_LIMIT),
              ),
            );
          }
          costs.push([`${rulePath}.messageExpression`, messageCost]);
        }
      }
      if (rule.fieldPath !== undefined && rule.fieldPath !== '')
        compiled.normalizedFieldPath = normalizeFieldPath(rule.fieldPath, schema);
      if (compiled.usesOldSelf) {
        if (uncorrelatablePath !== undefined) {
          celErrors.push(
            new FieldError(
              'FieldValueInvalid',
              `${rulePath}.rule`,
              rule.rule,
              `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatablePath}`,
            ),
          );
        }
      } else if (rule.optionalOldSelf !== undefined) {
        celErrors.push(optionalOldSelfUnused(rulePath, rule.optionalOldSelf));
      }
    });
  }

  const properties = new Map<string, CompiledNode>();
  const mapType = schema['x-kubernetes-map-type'];
  const mapCorrelatable = mapType === undefined || mapType === 'granular' || mapType === 'atomic';
  if (decl.kind === 'object') {
    for (const [name, prop] of Object.entries(schema.properties ?? {})) {
      if (!hasRules(prop)) continue;
      const field = decl.byProperty.get(name);
      const fieldDecl = field?.type ?? schemaDeclType(prop, prop['x-kubernetes-embedded-resource'] === true);
      if (!fieldDecl) continue;
      const child = compileNode(
        ctx,
        prop,
        fieldDecl,
        prop['x-kubernetes-embedded-resource'] === true,
        `${path}.properties[${name}]`,
        cardinality,
        mapCorrelatable ? uncorrelatablePath : (uncorrelatablePath ?? path),
      );
      if (child) properties.set(name, child);
    }
  }
  let items: CompiledNode | undefined;
  if (decl.kind === 'list' && schema.items && hasRules(schema.items)) {
    const card = cardinality !== undefined && schema.maxItems !== undefined ? cardinality * schema.maxItems : undefined;
    const listCorrelatable = schema['x-kubernetes-list-type'] === 'map';
    items = compileNode(
      ctx,
      schema.items,
      decl.elem,
      schema.items['x-kubernetes-embedded-resource'] === true,
      `${path}.items`,
      card,
      listCorrelatable ? uncorrelatablePath : (uncorrelatablePath ?? path),
    );
  }
  let additionalProperties: CompiledNode | undefined;
  const ap = schema.additionalProperties;
  if (decl.kind === 'map' && typeof ap === 'object' && hasRules(ap)) {
    const card =
      cardinality !== undefined && schema.maxProperties !== undefined ? cardinality * schema.maxProperties : undefined;
    additionalProperties = compileNode(
      ctx,
      ap,
      decl.elem,
      ap['x-kubernetes-embedded-resource'] === true,
      `${path}.additionalProperties`,
      card,
      uncorrelatablePath,
    );
  }
  append(ctx.errors, schemaErrors);
  ctx.schemaErrorCount += schemaErrors.length;
  const below = (p: string) => p === path || p.startsWith(`${path}.`);
  if (ctx.schemaErrorCount === schemaErrorsBefore && !ctx.listTypeErrorPaths.some(below) && ctx.compileExpressions) {
    append(ctx.errors, celErrors);
    for (const [costPath, cost] of costs) observeCost(ctx.totalCost, costPath, cost);
  }
  if (compiledRules.length === 0 && properties.size === 0 && !items && !additionalProperties) return undefined;
  return {
    decl,
    convert: converterFor(decl, (d) => ctx.table.classOf(d)),
    usesOldSelf: compiledRules.some((r) => r.usesOldSelf),
    mapCorrelatable,
    schemaType: schema.type ?? '',
    resourceRoot,
    rules: compiledRules,
    properties,
    items,
    additionalProperties,
  };
}

/** validateMapListKeysMapSet's first check: the items of a set or map list cannot be nullable. */
function nullableSetOrMapItems(s: JSONSchemaProps, path: string, out: FieldError[] = []): FieldError[] {
  const listType = s['x-kubernetes-list-type'];
  if (s.items?.nullable && (listType === 'set' || listType === 'map')) {
    out.push(
      new FieldError(
        'FieldValueForbidden',
        `${path}.items.nullable`,
        undefined,
        `cannot be nullable when x-kubernetes-list-type is ${listType}`,
      ),
    );
  }
  if (s.items) nullableSetOrMapItems(s.items, `${path}.items`, out);
  if (typeof s.additionalProperties === 'object') {
    nullableSetOrMapItems(s.additionalProperties, `${path}.additionalProperties`, out);
  }
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    nullableSetOrMapItems(prop, `${path}.properties[${name}]`, out);
  }
  return out;
}

function optionalOldSelfUnused(rulePath: string, value: boolean): FieldError {
  return new FieldError(
    'FieldValueInvalid',
    `${rulePath}.optionalOldSelf`,
    value,
    'may not be set if oldSelf is not used in rule',
  );
}

function clockNanos(): number {
  return Number(process.hrtime.bigint() % 1_000_000_000n);
}

/** Compiles the CEL rules of a structural schema: the compiled tree for evaluate() plus the CRD-time errors. */
export function compileRules(openAPIV3Schema: JSONSchemaProps, options: CompileOptions = {}): CompileResult {
  const shared = options.environment ?? createCelEnvironment();
  const regexCache = shared.regexCache;
  // object types are registered on a child: the shared environment stays as it is (cloning freezes it)
  const base = shared.env.clone();
  const table = new ObjectTypeTable();
  const isRoot = options.isResourceRoot ?? true;
  const basePath = options.basePath ?? 'openAPIV3Schema';
  const listTypeErrors = nullableSetOrMapItems(openAPIV3Schema, basePath);
  const errors: FieldError[] = [...listTypeErrors];
  const decl = schemaDeclType(openAPIV3Schema, isRoot);
  if (!decl || !hasRules(openAPIV3Schema)) return { compiled: { objectClasses: table }, errors };
  registerAllObjectTypes(base, table, decl);
  const totalCost: TotalCost = { total: 0, mostExpensive: [] };
  const root = compileNode(
    {
      base,
      table,
      regexCache,
      errors,
      totalCost,
      clockNanos: options.clockNanos ?? clockNanos,
      compileExpressions: options.compileExpressions ?? true,
      schemaErrorCount: 0,
      listTypeErrorPaths: listTypeErrors.map((e) => e.field),
    },
    openAPIV3Schema,
    decl,
    isRoot,
    basePath,
    1,
    undefined,
  );
  if (options.compileExpressions !== false && totalCost.total > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    for (const expensive of totalCost.mostExpensive) {
      errors.push(
        new FieldError(
          'FieldValueForbidden',
          expensive.path,
          undefined,
          'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema',
        ),
      );
    }
    errors.push(
      new FieldError(
        'FieldValueForbidden',
        basePath,
        undefined,
        costErrorMessage(
          'x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema',
          totalCost.total,
          STATIC_ESTIMATED_CRD_COST_LIMIT,
        ),
      ),
    );
  }
  return { compiled: { root, objectClasses: table }, errors };
}
