/**
 * cel-go's runtime answers that @marcbachmann/cel-js's built-in operators and conversions do not give, and
 * whose overloads cannot be replaced: after an expression is checked, the handles of its operator and
 * conversion nodes are wrapped so that they refuse first (ordering a NaN, equality over an error value,
 * conversions strconv or the int64/uint64 range refuse, bytes that are not UTF-8).
 * Sources: github.com/google/cel-go@v0.29.2/common/types (double.go, int.go, string.go, bytes.go, overflow.go).
 */
import { CelFunctionError } from './library/errors.ts';
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

function guardBinaryOperators(nodes: readonly ExpressionAst[]): void {
  for (const node of nodes) {
    const guard = BINARY_GUARDS.find((g) => g.ops.has(node.op));
    const operator = node as ExpressionAst & { handle?: BinaryHandle };
    const run = operator.handle;
    if (!guard || typeof run !== 'function') continue;
    operator.handle = (left, right, ast, ev) => {
      const error = guard.error(left, right);
      if (error !== undefined) throw new CelFunctionError(error);
      return run(left, right, ast, ev);
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
      return convert(args, ast, ev);
    };
  }
}

/** Wraps the checked nodes' operator and conversion handles (see the module comment). */
export function guardRuntime(nodes: readonly ExpressionAst[]): void {
  guardBinaryOperators(nodes);
  convertAsCelGo(nodes);
}
