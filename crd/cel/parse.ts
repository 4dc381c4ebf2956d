/**
 * Parsing with @marcbachmann/cel-js plus the rewrites our environment needs before type checking:
 * string-extension calls the library implements with JavaScript semantics are renamed to our `k8s_*`
 * overloads (see library/strings.ts), and `has()` on any operand as cel-go allows (has-macro.ts). Also AST queries: variable references and regex literals.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { OVERRIDDEN_STRING_FUNCTIONS } from './common/string-overrides.ts';
import { allowPresenceTestsOnAnyOperand } from './has-macro.ts';
import { isValidRe2, type RegexCache } from './library/re2.ts';
import { guardRuntime, type PanicSlot, runRecoveringPanics } from './runtime-guards.ts';

export interface ExpressionAst {
  op: string;
  args: unknown;
  start?: number;
  end?: number;
}

export interface ParsedExpression {
  ast: ExpressionAst;
  /** Every type error, as cel-go's checker reports them: a node that fails is typed dyn and checking goes on. */
  check(): { valid: true; type: string } | { valid: false; errors: unknown[] };
  evaluate(activation: Record<string, unknown>): unknown;
}

const isAst = (x: unknown): x is ExpressionAst =>
  typeof x === 'object' && x !== null && 'op' in x && 'args' in x && typeof (x as { op: unknown }).op === 'string';

/** The AST nodes among a node's arguments (nested in arrays too) that `isChild` accepts. */
export function childNodes<T>(node: { args: unknown }, isChild: (x: unknown) => x is T): T[] {
  const out: T[] = [];
  const visit = (x: unknown) => {
    if (isChild(x)) out.push(x);
    else if (Array.isArray(x)) for (const y of x) visit(y);
  };
  visit(node.args);
  return out;
}

const children = (node: ExpressionAst): ExpressionAst[] => childNodes(node, isAst);

/**
 * Every node, each before its children and children in argument order. A loop over one array: a
 * recursive generator costs a resumption per level for every node, which deep rules feel.
 */
function walk(root: ExpressionAst): ExpressionAst[] {
  const nodes: ExpressionAst[] = [];
  const pending: ExpressionAst[] = [root];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    nodes.push(node);
    const own = children(node);
    for (let i = own.length - 1; i >= 0; i--) pending.push(own[i] as ExpressionAst);
  }
  return nodes;
}

function renameOverriddenCalls(ast: ExpressionAst): void {
  for (const node of walk(ast)) {
    if (node.op !== 'rcall' || !Array.isArray(node.args)) continue;
    const renamed = OVERRIDDEN_STRING_FUNCTIONS.get(node.args[0] as string);
    if (renamed !== undefined) node.args[0] = renamed;
  }
}

export function parseExpression(env: Environment, source: string): ParsedExpression {
  const parsed = env.parse(source) as unknown as {
    (ctx: Record<string, unknown>): unknown;
    ast: ExpressionAst;
    check(): { valid: true; type: string } | { valid: false; error: unknown };
  };
  renameOverriddenCalls(parsed.ast);
  allowPresenceTestsOnAnyOperand(walk(parsed.ast) as never[]);
  const panic: PanicSlot = { message: undefined };
  return {
    ast: parsed.ast,
    check: () => checkEveryNode(parsed, panic),
    evaluate: (activation) => runRecoveringPanics(() => parsed(activation), panic),
  };
}

type NodeCheck = (checker: { dynType: unknown }, ast: unknown, ctx: unknown) => unknown;

/**
 * cel-go's checker types a failing node as its error type, which assigns to anything like dyn, and goes
 * on, so it reports every error; @marcbachmann/cel-js stops at the first. For the duration of one check,
 * each node of this AST catches its own failure, records it and types itself dyn.
 */
function checkEveryNode(
  parsed: {
    ast: ExpressionAst;
    check(): { valid: true; type: string } | { valid: false; error: unknown };
  },
  panic: PanicSlot,
): { valid: true; type: string } | { valid: false; errors: unknown[] } {
  const errors: unknown[] = [];
  const nodes = walk(parsed.ast);
  for (const node of nodes) {
    const own = (Object.getPrototypeOf(node) as { check: NodeCheck }).check;
    Object.defineProperty(node, 'check', {
      configurable: true,
      value(this: ExpressionAst, checker: { dynType: unknown }, ast: unknown, ctx: unknown) {
        try {
          return own.call(this, checker, ast, ctx);
        } catch (error) {
          errors.push(withNode(error, node));
          return checker.dynType;
        }
      },
    });
  }
  try {
    const checked = parsed.check();
    if (!checked.valid) errors.push(checked.error);
    if (errors.length > 0 || !checked.valid) return { valid: false, errors };
    guardRuntime(nodes, panic);
    return checked;
  } finally {
    for (const node of nodes) delete (node as Partial<{ check: unknown }>).check;
  }
}

/** The library attaches the failing node as the error leaves the checker; here it leaves at the node. */
function withNode(error: unknown, node: ExpressionAst): unknown {
  const attach = (error as { withAst?: (n: unknown) => unknown } | null)?.withAst;
  return typeof attach === 'function' ? attach.call(error, node) : error;
}

/** Whether the expression refers to the variable `name` (outside comprehensions that rebind it). */
export function referencesVariable(ast: ExpressionAst, name: string): boolean {
  for (const node of walk(ast)) if (node.op === 'id' && node.args === name) return true;
  return false;
}

/** Offsets of `matches` regex literals that do not compile (cel.ValidateRegexLiterals). */
export function findRegexLiteralErrors(ast: ExpressionAst, cache: RegexCache): number[] {
  const offsets: number[] = [];
  for (const node of walk(ast)) {
    let literal: unknown;
    const name = Array.isArray(node.args) ? node.args[0] : undefined;
    if (node.op === 'rcall' && (name === 'matches' || name === 'k8s_matches'))
      literal = ((node.args as unknown[])[2] as unknown[])[0];
    else if (node.op === 'call' && Array.isArray(node.args) && node.args[0] === 'matches')
      literal = (node.args[1] as unknown[])[0];
    if (
      isAst(literal) &&
      literal.op === 'value' &&
      typeof literal.args === 'string' &&
      !isValidRe2(cache, literal.args)
    ) {
      offsets.push(literal.start ?? 0);
    }
  }
  return offsets;
}

/** The comprehension macros: their receiver is iterated (one-variable and two-variable forms). */
export const MACRO_NAMES: ReadonlySet<string> = new Set([
  'all',
  'exists',
  'exists_one',
  'map',
  'filter',
  'existsOne',
  'transformList',
  'transformMap',
  'transformMapEntry',
  'sortBy',
]);

/**
 * `cel.bind` is a @marcbachmann/cel-js built-in, but the Kubernetes environment does not enable cel-go's
 * bindings extension: the API server reports every identifier of the call as undeclared. Returns the
 * offsets and names of those identifiers (in source order), or an empty list when the expression has no cel.bind.
 */
export function findUnsupportedBindings(
  ast: ExpressionAst,
  source: string,
  declared: ReadonlySet<string>,
): Array<{ offset: number; name: string }> {
  const out: Array<{ offset: number; name: string }> = [];
  for (const node of walk(ast)) {
    if (node.op !== 'rcall' || !Array.isArray(node.args)) continue;
    const [name, receiver, args] = node.args as [string, ExpressionAst, ExpressionAst[]];
    if (name !== 'bind' || receiver.op !== 'id' || receiver.args !== 'cel') continue;
    out.push({ offset: receiver.start ?? 0, name: 'cel' });
    out.push({ offset: source.indexOf('(', receiver.end ?? 0), name: 'bind' });
    const iterationVars = new Set<string>();
    for (const a of args) {
      for (const n of walk(a)) {
        if (n.op === 'rcall' && Array.isArray(n.args) && MACRO_NAMES.has(n.args[0] as string)) {
          for (const v of n.args[2] as ExpressionAst[]) if (v.op === 'id') iterationVars.add(v.args as string);
        }
      }
    }
    for (const a of args) {
      for (const n of walk(a)) {
        if (n.op === 'id' && !declared.has(n.args as string) && !iterationVars.has(n.args as string)) {
          out.push({ offset: n.start ?? 0, name: n.args as string });
        }
      }
    }
  }
  return out;
}

interface TypedAst extends ExpressionAst {
  checkedType?: { name?: string };
}

function typeName(node: TypedAst): string {
  const name = node.checkedType?.name ?? 'dyn';
  return name.startsWith('dyn<') ? 'dyn' : name;
}

interface TypeTree {
  name: string;
  params: TypeTree[];
}

function typeTree(name: string): TypeTree {
  let i = 0;
  const read = (): TypeTree => {
    const start = i;
    while (i < name.length && !'<>,'.includes(name[i] as string)) i++;
    const tree: TypeTree = { name: name.slice(start, i).trim(), params: [] };
    if (name[i] === '<') {
      do {
        i++;
        tree.params.push(read());
      } while (name[i] === ',');
      i++;
    }
    return tree;
  };
  return read();
}

/** A type parameter the checker left free (`T` of `[]`, `K` and `V` of `{}`): cel-go substitutes it by unification. */
const isTypeParameter = (t: TypeTree) => t.params.length === 0 && /^[A-Z]\d*$/.test(t.name);

function unifiable(a: TypeTree, b: TypeTree): boolean {
  if (isTypeParameter(a) || isTypeParameter(b)) return true;
  return (
    a.name === b.name &&
    a.params.length === b.params.length &&
    a.params.every((p, i) => unifiable(p, b.params[i] as TypeTree))
  );
}

/**
 * Whether two element types of a literal are the same type once cel-go has substituted its type parameters;
 * `joined` is then the more specific of the two.
 */
function sameAfterSubstitution(first: string, next: string): { same: boolean; joined: string } {
  if (first === next) return { same: true, joined: first };
  const a = typeTree(first);
  const b = typeTree(next);
  if (!unifiable(a, b)) return { same: false, joined: first };
  return { same: true, joined: /\b[A-Z]\d*\b/.test(first) ? next : first };
}

/**
 * cel.ValidateHomogeneousAggregateLiterals: list and map literals must have elements of one type, except inside
 * string.format() arguments (the strings extension exempts them). Returns offsets and the two type names.
 * Source: github.com/google/cel-go@v0.29.2/cel/validator.go (homogeneousAggregateLiteralValidator).
 */
export function findHeterogeneousLiterals(
  ast: ExpressionAst,
): Array<{ offset: number; expected: string; found: string }> {
  const out: Array<{ offset: number; expected: string; found: string }> = [];
  const visit = (node: ExpressionAst, exempt: boolean) => {
    const isFormat = node.op === 'rcall' && Array.isArray(node.args) && node.args[0] === 'k8s_format';
    if (!exempt && !isFormat && node.op === 'list' && Array.isArray(node.args)) {
      let first: string | undefined;
      for (const el of node.args as TypedAst[]) {
        const t = typeName(el);
        if (first === undefined) {
          first = t;
          continue;
        }
        const { same, joined } = sameAfterSubstitution(first, t);
        if (!same) {
          out.push({ offset: el.start ?? 0, expected: first, found: t });
          break;
        }
        first = joined;
      }
    }
    if (!exempt && !isFormat && node.op === 'map' && Array.isArray(node.args)) {
      let keyType: string | undefined;
      let valueType: string | undefined;
      for (const [k, v] of node.args as Array<[TypedAst, TypedAst]>) {
        const kt = typeName(k);
        const vt = typeName(v);
        if (keyType === undefined) {
          keyType = kt;
          valueType = vt;
          continue;
        }
        const keys = sameAfterSubstitution(keyType, kt);
        const values = sameAfterSubstitution(valueType ?? 'dyn', vt);
        if (!keys.same) out.push({ offset: k.start ?? 0, expected: keyType, found: kt });
        if (!values.same) out.push({ offset: v.start ?? 0, expected: valueType ?? 'dyn', found: vt });
        keyType = keys.joined;
        valueType = values.joined;
      }
    }
    for (const c of children(node)) visit(c, exempt || isFormat);
  };
  visit(ast, false);
  return out;
}

const CONVERSIONS = new Set([
  'int',
  'uint',
  'double',
  'string',
  'bytes',
  'bool',
  'timestamp',
  'duration',
  'dyn',
  'type',
]);

function isConstant(node: ExpressionAst): boolean {
  if (node.op === 'value') return true;
  if (node.op === '-_' && isAst(node.args) && node.args.op === 'value') return true;
  if (node.op === 'list' && Array.isArray(node.args)) return (node.args as ExpressionAst[]).every(isConstant);
  if (node.op === 'call' && Array.isArray(node.args) && CONVERSIONS.has(node.args[0] as string)) {
    const args = node.args[1] as ExpressionAst[];
    return args.length === 1 && isConstant(args[0] as ExpressionAst);
  }
  return false;
}

/**
 * Type conversions of constants (`uint(-1)`, `int('x')`): cel-go folds them when it plans the program and refuses
 * the program if one fails (interpreter/decorators.go, maybeOptimizeConstUnary). Returns their source ranges.
 */
export function findConstantConversions(ast: ExpressionAst): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  for (const node of walk(ast)) {
    if (node.op !== 'call' || !Array.isArray(node.args) || !CONVERSIONS.has(node.args[0] as string)) continue;
    if (isConstant(node) && node.start !== undefined && node.end !== undefined)
      out.push({ start: node.start, end: node.end });
  }
  return out;
}

const DURATION_LITERAL = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$|^[-+]?0$/;
const TIMESTAMP_LITERAL = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * cel.ValidateDurationLiterals / ValidateTimestampLiterals: duration('...') and timestamp('...') with a string
 * literal that does not parse. Returns the literal offsets and the function name.
 */
export function findInvalidTimeLiterals(ast: ExpressionAst): Array<{ offset: number; name: string }> {
  const out: Array<{ offset: number; name: string }> = [];
  for (const node of walk(ast)) {
    if (node.op !== 'call' || !Array.isArray(node.args)) continue;
    const name = node.args[0] as string;
    if (name !== 'duration' && name !== 'timestamp') continue;
    const arg = (node.args[1] as ExpressionAst[])[0];
    if (arg?.op !== 'value' || typeof arg.args !== 'string') continue;
    const valid =
      name === 'duration'
        ? DURATION_LITERAL.test(arg.args)
        : TIMESTAMP_LITERAL.test(arg.args) && !Number.isNaN(new Date(arg.args).getTime());
    if (!valid) out.push({ offset: arg.start ?? 0, name });
  }
  return out;
}
