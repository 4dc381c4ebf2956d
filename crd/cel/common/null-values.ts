/**
 * cel-go's answers for the null items and values of nullable lists and maps. The API server gives a rule
 * these as null (UnstructuredToVal: types.NullValue) and the error comes where an operator or function meets
 * one ('no such overload: _>_'; `==` answers false, `in` and the list functions that compare look past it);
 * @marcbachmann/cel-js refuses the null where the rule reads it. After an expression is checked, its access
 * nodes read such a null as null and its operators and calls refuse it with cel-go's texts.
 * An iteration variable may be null too (`self.all(x, x > 3)` over nullable items). Sources: k8s.io/apiserver@v0.37.2/pkg/cel/common/valuesunstructured.go,
 * github.com/google/cel-go@v0.29.2/common/types (null.go, err.go), interpreter/dispatcher.go; the texts were
 * read from kube-apiserver v1.37.2 (test/e2e/cel-parity-corpus.ts).
 */
import { CelFunctionError } from './errors.ts';
import { OPERATOR_NAMES } from './issues.ts';
import { type EvaluableNode, interceptEvaluate } from './node-evaluate.ts';

/** The operators that have no overload for null (== and != compare it, `in` looks for it). */
const REFUSE_NULL: ReadonlySet<string> = new Set(['<', '<=', '>', '>=', '+', '-', '*', '/', '%']);

/** cel-go's standard string functions, whose dispatch reports no function name. */
const UNNAMED_OVERLOADS: ReadonlySet<string> = new Set(['startsWith', 'endsWith', 'contains', 'matches']);
/** The functions that take a null: the conversion to dyn, type(), optional.of. */
const ACCEPT_NULL: ReadonlySet<string> = new Set(['dyn', 'type', 'of', 'ofNonZeroValue']);
/** The Kubernetes list functions that order or add their items: a null item has no overload. */
const ORDERING_LIST_FUNCTIONS: ReadonlySet<string> = new Set(['sum', 'min', 'max', 'isSorted', 'join']);

/** The library's refusal of a null in a typed list or map, as it reads one. */
function isNullRefusal(error: unknown): boolean {
  const e = error as { code?: unknown; summary?: unknown } | null;
  return (
    (e?.code === 'field_type_mismatch' || e?.code === 'list_item_type_mismatch') &&
    typeof e.summary === 'string' &&
    e.summary.endsWith("got 'null'")
  );
}

/** The error cel-go gives a call that meets a null, or undefined when it has an answer. */
function callError(name: string, args: readonly unknown[]): string | undefined {
  const own = name.replace(/^k8s_/, '');
  const [first] = args;
  if (Array.isArray(first) && first.includes(null)) {
    if (ORDERING_LIST_FUNCTIONS.has(own)) return `no such overload: ${own}(list)`;
    if (own === 'sort') return 'list elements must be comparable';
  }
  if (!args.includes(null) || ACCEPT_NULL.has(own)) return undefined;
  if (own === 'size') return 'no such overload: size';
  if (UNNAMED_OVERLOADS.has(own)) return 'no such overload';
  const types = args.map((a) => (a === null ? 'null_type' : typeof a === 'string' ? 'string' : 'dyn'));
  return `no such overload: ${own}(${types.join(', ')})`;
}

/** An iteration context of the library (registry.js OverlayContext): its variable's value is a plain field. */
export interface IterationContext {
  iterValue: unknown;
  setIterValue(v: unknown, ev: unknown): IterationContext;
}

/** Binds an iteration variable; a null is bound as it is, where the library checks the value against the type. */
export function bindIterationValue<T extends IterationContext>(ctx: T, value: unknown, ev: unknown): T {
  if (value !== null) return ctx.setIterValue(value, ev) as T;
  ctx.iterValue = null;
  return ctx;
}

/** The comprehension a built-in macro (all, exists, exists_one, map, filter) expands to binds its values so too. */
function acceptNullIterations(node: EvaluableNode): void {
  // the library keeps a built-in macro's expansion as the call's `alternate`: a comprehension node
  const expansion = (node as { meta?: { alternate?: { args?: { iterCtx?: IterationContext } } } }).meta?.alternate;
  const ctx = expansion?.args?.iterCtx;
  if (ctx === undefined || Object.hasOwn(ctx, 'setIterValue')) return;
  const bind = ctx.setIterValue;
  ctx.setIterValue = function (this: IterationContext, value, ev) {
    return value === null ? bindIterationValue(this, value, ev) : bind.call(this, value, ev);
  };
}

type Handle = (args: unknown, a: unknown, b: unknown) => unknown;
type BinaryHandle = (left: unknown, right: unknown, ast: unknown, ev: unknown) => unknown;

function guardHandle(node: EvaluableNode & { handle?: Handle }, name: string): void {
  const run = node.handle;
  if (typeof run !== 'function') return;
  node.handle = (args, a, b) => {
    const error = Array.isArray(args) ? callError(name, args) : undefined;
    if (error !== undefined) throw new CelFunctionError(error);
    return run(args, a, b);
  };
}

type UnaryHandle = (value: unknown, ast: unknown, ev: unknown) => unknown;

function guardNegation(node: EvaluableNode & { handle?: UnaryHandle }): void {
  const run = node.handle;
  if (typeof run !== 'function') return;
  node.handle = (value, ast, ev) => {
    if (value === null) throw new CelFunctionError('no such overload: -_');
    return run(value, ast, ev);
  };
}

function guardOperator(node: EvaluableNode & { handle?: BinaryHandle }, name: string): void {
  const run = node.handle;
  if (typeof run !== 'function') return;
  node.handle = (left, right, ast, ev) => {
    if (left === null || right === null) throw new CelFunctionError(`no such overload: ${name}`);
    return run(left, right, ast, ev);
  };
}

/**
 * Whether an access reads a list item or a map value (what may be null); an object's field never is (a null
 * field of an object is an absent one), and most accesses are those.
 */
function readsListOrMap(node: EvaluableNode): boolean {
  const operand = Array.isArray(node.args)
    ? (node.args[0] as { checkedType?: { kind?: string } } | undefined)
    : undefined;
  const kind = operand?.checkedType?.kind;
  return kind === undefined || kind === 'list' || kind === 'map' || kind === 'dyn';
}

/** Reads a null item or value as null, where the library refuses it. */
function readNull(node: EvaluableNode): void {
  interceptEvaluate(node, function (evaluate, ev, ast, ctx) {
    try {
      return evaluate.call(this, ev, ast, ctx);
    } catch (error) {
      if (isNullRefusal(error)) return null;
      throw error;
    }
  });
}

/** Installs the null handling on the nodes of a checked expression. */
export function guardNullValues(nodes: readonly EvaluableNode[]): void {
  for (const node of nodes) {
    const operator = REFUSE_NULL.has(node.op) ? OPERATOR_NAMES[node.op] : undefined;
    if ((node.op === '[]' || node.op === '.') && readsListOrMap(node)) readNull(node);
    else if (operator !== undefined) guardOperator(node, operator);
    else if (node.op === '-_') guardNegation(node);
    else if ((node.op === 'call' || node.op === 'rcall') && Array.isArray(node.args)) {
      guardHandle(node, node.args[0] as string);
      acceptNullIterations(node);
    }
  }
}
