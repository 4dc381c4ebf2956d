/**
 * Runtime errors of @marcbachmann/cel-js and our library functions -> cel-go's error texts, as the API server
 * prints them after "<error> evaluating rule: ...". Source: github.com/google/cel-go@v0.29.2/common/types/err.go, list.go.
 */
import { CelFunctionError } from './common/errors.ts';

/** Thrown from inside an evaluation when the per-call limit is exceeded; runtimeErrorText maps it. */
export class CostLimitExceeded extends Error {
  override name = 'CostLimitExceeded';
  constructor() {
    super('operation cancelled: actual cost limit exceeded');
  }
}

const REWRITES: Array<[RegExp, (m: RegExpExecArray) => string]> = [
  [/^No such key: index out of bounds, index (-?\d+) .*$/, (m) => `index out of bounds: ${m[1]}`],
  [/^No such key: (.*)$/, (m) => `no such key: ${m[1]}`],
  [/^integer overflow.*$/, () => 'integer overflow'],
  [/^modulo by zero$/, () => 'modulus by zero'],
  [/^division by zero$/, () => 'division by zero'],
  [/^no such overload.*$/, () => 'no such overload'],
  [/^int\(\) type error: integer overflow$/, () => 'integer overflow'],
  [/^uint\(\) type error: unsigned integer overflow$/, () => 'unsigned integer overflow'],
  [/^int\(\) type error.*$/, () => "type conversion error from 'string' to 'int'"],
  [/^uint\(\) type error.*$/, () => "type conversion error from 'string' to 'uint'"],
  [/^double\(\) type error.*$/, () => "type conversion error from 'string' to 'double'"],
  [/^bool\(\) type error.*$/, () => "type conversion error from 'string' to 'bool'"],
  [/^Invalid duration string.*$/, () => "type conversion error from 'string' to 'google.protobuf.Duration'"],
  [/^timestamp\(\) requires a string.*$/, () => "type conversion error from 'string' to 'google.protobuf.Timestamp'"],
  [/^found no matching overload.*$/, () => 'no such overload'],
  // a predicate that is not a bool (a null item): cel-go's `&&`, `||` or `?:` of the macro's expansion
  [/predicate must return bool, got .*$/, () => 'no such overload'],
];

/** The type of the first argument of the call the error is attached to, when the library recorded it. */
function firstArgumentType(error: { node?: { args?: unknown } }): string | undefined {
  const args = error.node?.args;
  const callArgs = Array.isArray(args) ? args[args.length - 1] : undefined;
  const first = Array.isArray(callArgs) ? (callArgs[0] as { checkedType?: { name?: string } } | undefined) : undefined;
  return first?.checkedType?.name;
}

export function runtimeErrorText(error: unknown): string {
  if (error instanceof CelFunctionError) return error.message;
  const e = error as { summary?: string; message?: string; node?: { args?: unknown } };
  const summary = e.summary ?? (e.message ?? String(error)).split('\n')[0] ?? '';
  // uint(-1): the library reports a conversion error, cel-go an overflow
  if (summary === 'uint() type error: cannot convert to uint' && firstArgumentType(e) === 'int') {
    return 'unsigned integer overflow';
  }
  for (const [re, f] of REWRITES) {
    const m = re.exec(summary);
    if (m) return f(m);
  }
  return summary;
}
