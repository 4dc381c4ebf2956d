/**
 * string.format(list) from the cel-go strings extension: %s, %d, %f, %e, %x, %X, %o, %b and %%.
 * Source: github.com/google/cel-go@v0.29.2/ext/formatting.go. Unsupported verbs raise an error.
 */
import { Duration } from '@marcbachmann/cel-js/evaluator';
import { formatDurationSeconds } from '../common/duration.ts';
import { CelFunctionError } from '../common/errors.ts';

function typeName(v: unknown): string {
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (v === null) return 'null_type';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Map) return 'map';
  if (v instanceof Uint8Array) return 'bytes';
  if (v instanceof Date) return 'google.protobuf.Timestamp';
  if (v instanceof Duration) return 'google.protobuf.Duration';
  return 'object';
}

function formatDouble(d: number): string {
  if (Number.isNaN(d)) return 'NaN';
  if (!Number.isFinite(d)) return d > 0 ? 'Infinity' : '-Infinity';
  return String(d);
}

/** The %s rendering of a value (cel-go stringFormatter). */
export function celToDisplayString(v: unknown, nested = false): string {
  if (typeof v === 'string') return nested ? JSON.stringify(v) : v;
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return formatDouble(v);
  if (v === null) return 'null';
  if (v instanceof Uint8Array)
    return nested ? `b${JSON.stringify(Buffer.from(v).toString('utf8'))}` : Buffer.from(v).toString('utf8');
  if (v instanceof Date) return v.toISOString().replace('.000Z', 'Z');
  if (v instanceof Duration) return formatDurationSeconds(v);
  if (Array.isArray(v)) return `[${v.map((x) => celToDisplayString(x, true)).join(', ')}]`;
  if (v instanceof Map) {
    const entries = [...v.entries()].map(
      ([k, x]) => [celToDisplayString(k, true), celToDisplayString(x, true)] as const,
    );
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return `{${entries.map(([k, x]) => `${k}: ${x}`).join(', ')}}`;
  }
  return String(v);
}

function conversionError(v: unknown, to: string): CelFunctionError {
  return new CelFunctionError(`error during formatting: type conversion error from '${typeName(v)}' to '${to}'`);
}

function integer(v: unknown, radix: number, upper = false): string {
  if (typeof v === 'bigint') {
    const s = v.toString(radix);
    return upper ? s.toUpperCase() : s;
  }
  throw conversionError(v, 'int');
}

function fixed(v: unknown, precision: number | undefined, exp: boolean): string {
  const d = typeof v === 'bigint' ? Number(v) : v;
  if (typeof d !== 'number') throw conversionError(v, 'double');
  if (Number.isNaN(d)) return 'NaN';
  if (!Number.isFinite(d)) return d > 0 ? 'Infinity' : '-Infinity';
  const p = precision ?? 6;
  if (!exp) return d.toFixed(p);
  return d.toExponential(p).replace(/e([+-])(\d)$/, 'e$10$2');
}

export function formatString(template: string, args: unknown[]): string {
  let out = '';
  let argIndex = 0;
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (c !== '%') {
      out += c;
      continue;
    }
    i++;
    if (template[i] === '%') {
      out += '%';
      continue;
    }
    let precision: number | undefined;
    if (template[i] === '.') {
      let digits = '';
      i++;
      while (i < template.length && /[0-9]/.test(template[i] ?? '')) digits += template[i++];
      precision = Number(digits || '0');
    }
    const verb = template[i];
    if (argIndex >= args.length) {
      throw new CelFunctionError(`index ${argIndex} out of range`);
    }
    const arg = args[argIndex++];
    switch (verb) {
      case 's':
        out += celToDisplayString(arg);
        break;
      case 'd':
        out += integer(arg, 10);
        break;
      case 'f':
        out += fixed(arg, precision, false);
        break;
      case 'e':
        out += fixed(arg, precision, true);
        break;
      case 'x':
      case 'X':
        if (typeof arg === 'string' || arg instanceof Uint8Array) {
          const hex = Buffer.from(typeof arg === 'string' ? Buffer.from(arg, 'utf8') : arg).toString('hex');
          out += verb === 'X' ? hex.toUpperCase() : hex;
        } else out += integer(arg, 16, verb === 'X');
        break;
      case 'o':
        out += integer(arg, 8);
        break;
      case 'b':
        out += typeof arg === 'boolean' ? String(arg) : integer(arg, 2);
        break;
      default:
        throw new CelFunctionError(`could not parse formatting clause: unrecognized formatting clause "${verb ?? ''}"`);
    }
  }
  return out;
}
