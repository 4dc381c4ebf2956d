/**
 * Compiles every x-kubernetes-validations rule of a structural schema, as the API server does when a CRD is
 * written: walks the schema node by node (each rule compiles in compile-rule.ts and is checked in
 * rule-checks.ts), keeps the errors the API server would report at that node, and adds up the estimated costs
 * against the limit for the whole CRD.
 * Sources: k8s.io/apiextensions-apiserver@v0.37.2/pkg/apiserver/schema/cel/compilation.go;
 * pkg/apis/apiextensions/validation/validation.go (CRD-time messages, cost limits).
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { JSONSchemaProps } from '../apiextensions.ts';
import { append } from '../apimachinery/append.ts';
import { FieldError } from '../apimachinery/field-error.ts';
import { type CompiledRule, compileRule, type RuleEnvironment, ruleScope } from './compile-rule.ts';
import { type DeclType, schemaDeclType } from './decl-types.ts';
import { type CelEnvironment, createCelEnvironment, ObjectTypeTable } from './environment.ts';
import { costErrorMessage, STATIC_ESTIMATED_CRD_COST_LIMIT } from './limits.ts';
import { type CompileFindings, compiledRuleErrors, ruleFieldErrors, rulePath } from './rule-checks.ts';
import { converterFor, type ValueConverter } from './values.ts';

export type { RuleProgram } from './check.ts';
export type { CompiledRule } from './compile-rule.ts';
export {
  CHEAP_RULE_COST,
  costErrorMessage,
  PER_CALL_LIMIT,
  RUNTIME_COST_BUDGET,
  STATIC_ESTIMATED_COST_LIMIT,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
} from './limits.ts';

export interface CompiledNode {
  decl: DeclType;
  /** The node's schema as written (ratcheting correlates only the fields it declares; decl.schema may add metadata). */
  schema: JSONSchemaProps;
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
  /**
   * Compile each node's rules when they are first evaluated, and report no CRD-time errors: for a CRD
   * already known to pass the CRD checks, whose objects may touch only a few of its nodes.
   */
  deferRules?: boolean;
}

export interface CompileResult {
  compiled: CompiledRules;
  /** Errors the API server reports when the CRD is created or updated. */
  errors: FieldError[];
  /**
   * Every estimated cost big enough to be listed as a contributor to a total over the limit (1 % of
   * it), by the path the contributor error names. Among contributors of equal cost the API server
   * lists those its map order visits first; these are the costs that tell equal ones apart.
   */
  contributorCosts: ReadonlyMap<string, number>;
}

/** TotalCost in the CRD validation: the sum of all estimated costs and the four most expensive contributions. */
interface TotalCost {
  total: number;
  mostExpensive: Array<{ path: string; cost: number }>;
  candidates: Map<string, number>;
}

function observeCost(total: TotalCost, path: string, cost: number): void {
  total.total += cost;
  if (cost < STATIC_ESTIMATED_CRD_COST_LIMIT / 100) return;
  total.candidates.set(path, cost);
  total.mostExpensive.push({ path, cost });
  total.mostExpensive.sort((a, b) => b.cost - a.cost);
  total.mostExpensive.splice(4);
}

/** The state of one compileRules() walk over a schema. */
interface CompileWalk extends RuleEnvironment {
  totalCost: TotalCost;
  /** False: report only the rules' own field errors (the API server's nil CEL context). */
  compileExpressions: boolean;
  deferRules: boolean;
  /** The rules' own field errors found so far, for the nodes above to know of those below. */
  schemaErrorCount: number;
  /** Lists whose list type refuses their items (a schema error of the list and the nodes above it). */
  listTypeErrorPaths: readonly string[];
  errors: FieldError[];
}

/** A schema node the walk compiles, and what it inherits from the nodes above. */
interface SchemaPosition {
  schema: JSONSchemaProps;
  decl: DeclType;
  resourceRoot: boolean;
  path: string;
  /** How many times the node's rules may run for one object, when its ancestors bound it. */
  cardinality: number | undefined;
  /** The nearest node above whose children get no old values. */
  uncorrelatablePath: string | undefined;
}

interface CompiledChildren {
  properties: Map<string, CompiledNode>;
  items?: CompiledNode;
  additionalProperties?: CompiledNode;
}

function registerAllObjectTypes(env: Environment, table: ObjectTypeTable, decl: DeclType | undefined): void {
  if (!decl) return;
  table.typeName(env, decl);
}

/** Whether the schema or a schema below it has x-kubernetes-validations. */
export function hasRules(s: JSONSchemaProps | undefined): boolean {
  if (!s) return false;
  if ((s['x-kubernetes-validations'] ?? []).length > 0) return true;
  if (hasRules(s.items)) return true;
  if (typeof s.additionalProperties === 'object' && hasRules(s.additionalProperties)) return true;
  return Object.values(s.properties ?? {}).some(hasRules);
}

/** MapIsCorrelatable: granular and atomic maps pass old values to their fields. */
function isMapCorrelatable(schema: JSONSchemaProps): boolean {
  const mapType = schema['x-kubernetes-map-type'];
  return mapType === undefined || mapType === 'granular' || mapType === 'atomic';
}

/** A child's cardinality: its parent's times the parent's bound on its elements, when both are known. */
function timesBound(cardinality: number | undefined, bound: number | undefined): number | undefined {
  return cardinality !== undefined && bound !== undefined ? cardinality * bound : undefined;
}

function compileProperties(walk: CompileWalk, at: SchemaPosition): Map<string, CompiledNode> {
  const properties = new Map<string, CompiledNode>();
  if (at.decl.kind !== 'object') return properties;
  const uncorrelatablePath = isMapCorrelatable(at.schema) ? at.uncorrelatablePath : (at.uncorrelatablePath ?? at.path);
  for (const [name, prop] of Object.entries(at.schema.properties ?? {})) {
    if (!hasRules(prop)) continue;
    const embedded = prop['x-kubernetes-embedded-resource'] === true;
    const decl = at.decl.byProperty.get(name)?.type ?? schemaDeclType(prop, embedded);
    if (!decl) continue;
    const child = compileNode(walk, {
      schema: prop,
      decl,
      resourceRoot: embedded,
      path: `${at.path}.properties[${name}]`,
      cardinality: at.cardinality,
      uncorrelatablePath,
    });
    if (child) properties.set(name, child);
  }
  return properties;
}

function compileItems(walk: CompileWalk, at: SchemaPosition): CompiledNode | undefined {
  const { schema, decl } = at;
  if (decl.kind !== 'list' || !schema.items || !hasRules(schema.items)) return undefined;
  // only the items of a map-type list correlate with the old list's
  const listCorrelatable = schema['x-kubernetes-list-type'] === 'map';
  return compileNode(walk, {
    schema: schema.items,
    decl: decl.elem,
    resourceRoot: schema.items['x-kubernetes-embedded-resource'] === true,
    path: `${at.path}.items`,
    cardinality: timesBound(at.cardinality, schema.maxItems),
    uncorrelatablePath: listCorrelatable ? at.uncorrelatablePath : (at.uncorrelatablePath ?? at.path),
  });
}

function compileAdditionalProperties(walk: CompileWalk, at: SchemaPosition): CompiledNode | undefined {
  const { schema, decl } = at;
  const ap = schema.additionalProperties;
  if (decl.kind !== 'map' || typeof ap !== 'object' || !hasRules(ap)) return undefined;
  return compileNode(walk, {
    schema: ap,
    decl: decl.elem,
    resourceRoot: ap['x-kubernetes-embedded-resource'] === true,
    path: `${at.path}.additionalProperties`,
    cardinality: timesBound(at.cardinality, schema.maxProperties),
    uncorrelatablePath: at.uncorrelatablePath,
  });
}

/** Compiles the node's rules; their errors and costs go to `findings`. */
function compileNodeRules(walk: CompileWalk, at: SchemaPosition, findings: CompileFindings): CompiledRule[] {
  const rules = at.schema['x-kubernetes-validations'] ?? [];
  if (rules.length === 0) return [];
  const scope = ruleScope(walk, at.schema, at.decl, at.cardinality);
  return rules.map((rule, i) => {
    const result = compileRule(scope, rule);
    const place = {
      path: rulePath(at.path, i),
      maxCardinality: scope.maxCardinality,
      uncorrelatablePath: at.uncorrelatablePath,
    };
    compiledRuleErrors(result, place, findings);
    return result.compiled;
  });
}

/**
 * Compiles a node's rules, then the nodes below. The rules' own field errors are always reported; the compile
 * and cost errors (and costs) of a node only when neither it nor any node below it has such errors, nor a
 * list-type error (the API server validates the children first, and compiles a node's rules only when the
 * schema errors, its children's included, are none).
 */
function compileNode(walk: CompileWalk, at: SchemaPosition): CompiledNode | undefined {
  const schemaErrorsBefore = walk.schemaErrorCount;
  const rules = at.schema['x-kubernetes-validations'] ?? [];
  const schemaErrors = rules.flatMap((rule, i) => ruleFieldErrors(rule, rulePath(at.path, i), at.schema));
  const findings: CompileFindings = { errors: [], costs: [] };
  const compiledRules = walk.deferRules ? undefined : compileNodeRules(walk, at, findings);
  const children: CompiledChildren = {
    properties: compileProperties(walk, at),
    items: compileItems(walk, at),
    additionalProperties: compileAdditionalProperties(walk, at),
  };
  append(walk.errors, schemaErrors);
  walk.schemaErrorCount += schemaErrors.length;
  const atOrBelow = (p: string) => p === at.path || p.startsWith(`${at.path}.`);
  if (
    walk.schemaErrorCount === schemaErrorsBefore &&
    !walk.listTypeErrorPaths.some(atOrBelow) &&
    walk.compileExpressions
  ) {
    append(walk.errors, findings.errors);
    for (const [costPath, cost] of findings.costs) observeCost(walk.totalCost, costPath, cost);
  }
  const ruleCount = (at.schema['x-kubernetes-validations'] ?? []).length;
  if (ruleCount === 0 && children.properties.size === 0 && !children.items && !children.additionalProperties)
    return undefined;
  const node = {
    decl: at.decl,
    schema: at.schema,
    convert: converterFor(at.decl, (d) => walk.table.classOf(d)),
    mapCorrelatable: isMapCorrelatable(at.schema),
    schemaType: at.schema.type ?? '',
    resourceRoot: at.resourceRoot,
    ...children,
  };
  return withRules(node, () => compiledRules ?? compileNodeRules(walk, at, { errors: [], costs: [] }));
}

/** A node whose rules (and whether they use oldSelf) are compiled on first use, once. */
function withRules(node: Omit<CompiledNode, 'rules' | 'usesOldSelf'>, compile: () => CompiledRule[]): CompiledNode {
  let rules: CompiledRule[] | undefined;
  const compiled = () => {
    rules ??= compile();
    return rules;
  };
  return Object.defineProperties(node as CompiledNode, {
    rules: { get: compiled, enumerable: true },
    usesOldSelf: { get: () => compiled().some((r) => r.usesOldSelf), enumerable: true },
  });
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

function clockNanos(): number {
  return Number(process.hrtime.bigint() % 1_000_000_000n);
}

/** The errors for a total estimated cost over the CRD's limit: each big contributor, then the total. */
function totalCostErrors(totalCost: TotalCost, basePath: string): FieldError[] {
  if (totalCost.total <= STATIC_ESTIMATED_CRD_COST_LIMIT) return [];
  const errors = totalCost.mostExpensive.map(
    (expensive) =>
      new FieldError(
        'FieldValueForbidden',
        expensive.path,
        undefined,
        'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema',
      ),
  );
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
  return errors;
}

/** Compiles the CEL rules of a structural schema: the compiled tree for evaluate() plus the CRD-time errors. */
export function compileRules(openAPIV3Schema: JSONSchemaProps, options: CompileOptions = {}): CompileResult {
  const shared = options.environment ?? createCelEnvironment();
  // object types are registered on a child: the shared environment stays as it is (cloning freezes it)
  const base = shared.env.clone();
  const table = new ObjectTypeTable();
  const isRoot = options.isResourceRoot ?? true;
  const basePath = options.basePath ?? 'openAPIV3Schema';
  const listTypeErrors = nullableSetOrMapItems(openAPIV3Schema, basePath);
  const errors: FieldError[] = [...listTypeErrors];
  const decl = schemaDeclType(openAPIV3Schema, isRoot);
  if (!decl || !hasRules(openAPIV3Schema))
    return { compiled: { objectClasses: table }, errors, contributorCosts: new Map() };
  registerAllObjectTypes(base, table, decl);
  const walk: CompileWalk = {
    base,
    table,
    regexCache: shared.regexCache,
    errors,
    totalCost: { total: 0, mostExpensive: [], candidates: new Map() },
    clockNanos: options.clockNanos ?? clockNanos,
    compileExpressions: options.compileExpressions ?? true,
    deferRules: options.deferRules ?? false,
    schemaErrorCount: 0,
    // The API server finds the error while validating the list, after its items' rules were compiled.
    listTypeErrorPaths: listTypeErrors.map((e) => e.field.replace(/\.items\.nullable$/, '')),
  };
  const root = compileNode(walk, {
    schema: openAPIV3Schema,
    decl,
    resourceRoot: isRoot,
    path: basePath,
    cardinality: 1,
    uncorrelatablePath: undefined,
  });
  if (options.compileExpressions !== false) append(errors, totalCostErrors(walk.totalCost, basePath));
  return { compiled: { root, objectClasses: table }, errors, contributorCosts: walk.totalCost.candidates };
}
