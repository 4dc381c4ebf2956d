/**
 * cel-go's runtime answers that @marcbachmann/cel-js's built-in operators and conversions do not give, and
 * whose overloads cannot be replaced: after an expression is checked, the handles of its operator and
 * conversion nodes are wrapped so that they refuse first (ordering a NaN, equality over an error value,
 * conversions strconv or the int64/uint64 range refuse, bytes that are not UTF-8); and the panics cel-go's
 * runtime cost trackers raise on an error value, which end the whole evaluation.
 * Sources: github.com/google/cel-go@v0.29.2/common/types (double.go, int.go, string.go, bytes.go, overflow.go),
 * ext/lists.go.
 */
import { CelFunctionError } from './common/errors.ts';
import { keyedListAdd } from './common/list-semantics.ts';
import { type EvaluableNode, interceptEvaluate } from './common/node-evaluate.ts';
import { guardNullValues } from './common/null-values.ts';
import { rawJsonOf } from './common/unstructured-object.ts';
import { celEquals, isMapLiteral } from './library/compare.ts';
import { CostLimitExceeded } from './runtime-errors.ts';
import { firstInvalidData } from './values.ts';

/** A checked AST node as the library leaves it: its operator or call, and the handle it runs. */
interface ExpressionAst {
  op: string;
  args: unknown;
}

type BinaryHandle = (left: unknown, right: unknown, ast: unknown, ev: unknown) => unknown;
const isNaNDouble = (x: unknown) => typeof x === 'number' && Number.isNaN(x);

/**
 * Runtime answers of cel-go the library's operator overloads (which cannot be replaced) do not give: before
 * the operator runs, each guard may name the error cel-go returns for these operands.
 */
const BINARY_GUARDS: ReadonlyArray<{
  ops: ReadonlySet<string>;
  error: (l: unknown, r: unknown) => string | undefined;
}> = [
  // Double and Int Compare: "NaN values cannot be ordered", where JavaScript answers false
  {
    ops: new Set(['<', '<=', '>', '>=']),
    error: (l, r) => (isNaNDouble(l) || isNaNDouble(r) ? 'NaN values cannot be ordered' : undefined),
  },
  // lists, maps and objects compare element by element: an error value inside is the answer
  { ops: new Set(['==', '!=']), error: (l, r) => (firstInvalidData(l) ?? firstInvalidData(r))?.message },
];

/** A list or map value: its equality is cel-go's element by element, as celEquals computes it. */
const isAggregate = (v: unknown) => Array.isArray(v) || v instanceof Map || isMapLiteral(v);

/**
 * Operators on lists and maps answered as cel-go answers them, where a set or map list of the API server's
 * values (list-semantics.ts) may sit at any depth: `==` and `!=` by celEquals (the left operand's type
 * decides), `+` of such a list as a union or merge, `in` asking `item == candidate`. Undefined: the
 * library's own operator answers.
 */
const AGGREGATE_OPERATORS: Readonly<Record<string, (l: unknown, r: unknown) => unknown>> = {
  '==': (l, r) => (isAggregate(l) && isAggregate(r) ? celEquals(l, r) : undefined),
  '!=': (l, r) => (isAggregate(l) && isAggregate(r) ? !celEquals(l, r) : undefined),
  '+': (l, r) => keyedListAdd(l, r, rawJsonOf),
  in: (l, r) => (isAggregate(l) && Array.isArray(r) ? r.some((item) => celEquals(l, item)) : undefined),
};

function guardBinaryOperators(nodes: readonly ExpressionAst[]): void {
  for (const node of nodes) {
    const guard = BINARY_GUARDS.find((g) => g.ops.has(node.op));
    const keyed = Object.hasOwn(AGGREGATE_OPERATORS, node.op) ? AGGREGATE_OPERATORS[node.op] : undefined;
    const operator = node as ExpressionAst & { handle?: BinaryHandle };
    const run = operator.handle;
    if ((!guard && !keyed) || typeof run !== 'function') continue;
    operator.handle = (left, right, ast, ev) => {
      const error = guard?.error(left, right);
      if (error !== undefined) throw new CelFunctionError(error);
      const answer = keyed?.(left, right);
      return answer === undefined ? run(left, right, ast, ev) : answer;
    };
  }
}

type CallHandle = (args: unknown[], ast: unknown, ev: unknown) => unknown;
const TWO_TO_63 = 2 ** 63;
const TWO_TO_64 = 2 ** 64;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

function validUtf8(bytes: Uint8Array): boolean {
  try {
    UTF8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * What cel-go's conversions refuse and the library's accept (common/types string.go, double.go, bytes.go,
 * overflow.go): strconv.ParseInt and ParseUint of base-10 digits only (no empty string), doubles out of
 * int64/uint64 range, bytes that are not UTF-8.
 */
function conversionError(name: string, value: unknown): string | undefined {
  if (name === 'int') {
    if (typeof value === 'string' && !/^[+-]?[0-9]+$/.test(value))
      return "type conversion error from 'string' to 'int'";
    if (typeof value === 'number' && !(value > -TWO_TO_63 && value < TWO_TO_63)) return 'integer overflow';
  } else if (name === 'uint') {
    if (typeof value === 'string' && !/^[0-9]+$/.test(value)) return "type conversion error from 'string' to 'uint'";
    if (typeof value === 'number' && !(value >= 0 && value < TWO_TO_64)) return 'unsigned integer overflow';
  } else if (name === 'string' && value instanceof Uint8Array && !validUtf8(value)) {
    return 'invalid UTF-8 in bytes, cannot convert to string';
  }
  return undefined;
}

/**
 * string() of a double as cel-go writes it (double.go: strconv.FormatFloat(d, 'g', -1, 64)): the shortest
 * digits that read back as the same double, in exponent form when the exponent is below -4 or at least 6
 * (JavaScript switches at -7 and 21), with a sign and at least two exponent digits: 1e+06, 1.5e-05.
 */
export function formatDoubleAsGo(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const [mantissa = '', exponentText = '0'] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent >= -4 && exponent < 6) return String(value);
  return `${mantissa}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

/** The library's int(), uint() and string() overloads cannot be replaced: each checked call refuses first. */
function convertAsCelGo(nodes: readonly ExpressionAst[]): void {
  for (const node of nodes) {
    const call = node as ExpressionAst & { handle?: CallHandle };
    const convert = call.handle;
    const name = Array.isArray(node.args) ? node.args[0] : undefined;
    if (node.op !== 'call' || typeof convert !== 'function' || !['int', 'uint', 'string'].includes(name)) continue;
    call.handle = (args, ast, ev) => {
      const error = conversionError(name as string, args[0]);
      if (error !== undefined) throw new CelFunctionError(error);
      if (name === 'string' && typeof args[0] === 'number') return formatDoubleAsGo(args[0]);
      return convert(args, ast, ev);
    };
  }
}

/**
 * A panic inside cel-go's evaluation: the interpreter recovers it as "internal error: ...", which ends the whole
 * evaluation (no `||` or `all()` absorbs it). Set during one evaluation, read at its end (runRecoveringPanics).
 */
export interface PanicSlot {
  message: string | undefined;
}

/** The panic of a Go type assertion `arg.(traits.Lister)` on an error value (traits.Lister's first method is Add). */
export const LISTER_ASSERTION_PANIC =
  'internal error: interface conversion: *types.Err is not traits.Lister: missing method Add';

/**
 * The runtime cost trackers of sort(), distinct() and sortBy (ext/lists.go trackListSort, trackListDistinct, trackListSortBy) run after
 * the call, also when its receiver is an error value, and assert that the receiver is a list: an error there
 * (`self.items.sort()` with `items` absent) panics where any other function would return the error.
 */
const LIST_ASSERTING_TRACKERS: ReadonlySet<string> = new Set(['sort', 'distinct']);

function panicOnErrorReceivers(nodes: readonly ExpressionAst[], panic: PanicSlot): void {
  for (const node of nodes) {
    if (node.op !== 'rcall' || !Array.isArray(node.args)) continue;
    const [name, receiver, args] = node.args as [string, EvaluableNode, EvaluableNode[]];
    if (LIST_ASSERTING_TRACKERS.has(name) && args.length === 0)
      panicWhenItFails(receiver, panic, LISTER_ASSERTION_PANIC);
    // sortBy's keys are `list.map(e, key)`: an error in the list or in any key makes them an error value,
    // which trackListSortBy asserts to be a list
    if (name === 'sortBy' && args.length === 2) {
      panicWhenItFails(receiver, panic, LISTER_ASSERTION_PANIC);
      panicWhenItFails(args[1] as EvaluableNode, panic, LISTER_ASSERTION_PANIC);
    }
  }
}

/** An error out of `node`'s evaluation (not the cost limit, itself a cancellation) is followed by the panic. */
export function panicWhenItFails(node: EvaluableNode, panic: PanicSlot, message: string): void {
  interceptEvaluate(node, function (evaluate, ev, ast, ctx) {
    try {
      return evaluate.call(this, ev, ast, ctx);
    } catch (error) {
      if (!(error instanceof CostLimitExceeded)) panic.message ??= message;
      throw error;
    }
  });
}

/** Runs a program as cel-go's interpreter does with its panics: one recorded during the run is the run's error. */
export function runRecoveringPanics<T>(run: () => T, panic: PanicSlot): T {
  panic.message = undefined;
  let result: T;
  try {
    result = run();
  } catch (error) {
    if (panic.message === undefined) throw error;
    throw new CelFunctionError(panic.message);
  }
  if (panic.message !== undefined) throw new CelFunctionError(panic.message);
  return result;
}

/** Wraps the checked nodes' operator and conversion handles and the receivers that panic (see the module comment). */
export function guardRuntime(nodes: readonly ExpressionAst[], panic: PanicSlot): void {
  guardBinaryOperators(nodes);
  convertAsCelGo(nodes);
  panicOnErrorReceivers(nodes, panic);
  // last: in front of the guards above
  guardNullValues(nodes as unknown as EvaluableNode[]);
}
