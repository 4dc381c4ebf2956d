/**
 * CEL ordering and equality on runtime values, as cel-go defines them (traits.Comparer, ref.Val.Equal).
 * Strings compare by UTF-8 bytes (= code points), like Go.
 */
import { Duration } from '@marcbachmann/cel-js/evaluator';
import { keyedListEquals } from '../common/list-semantics.ts';
import { rawJsonOf, unstructuredEquals } from '../common/unstructured-object.ts';

export type CelComparable = bigint | number | boolean | string | Date | Duration | Uint8Array;

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done || y.done) return x.done && y.done ? 0 : x.done ? -1 : 1;
    const cx = x.value.codePointAt(0) ?? 0;
    const cy = y.value.codePointAt(0) ?? 0;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

/** -1, 0 or 1. Mixed int/double compare numerically (CrossTypeNumericComparisons). */
export function celCompare(a: CelComparable, b: CelComparable): number {
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
    return sign(Number(a) - Number(b));
  }
  if (a instanceof Date && b instanceof Date) return sign(a.getTime() - b.getTime());
  if (a instanceof Duration && b instanceof Duration) {
    if (a.seconds !== b.seconds) return a.seconds < b.seconds ? -1 : 1;
    return sign(a.nanos - b.nanos);
  }
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return (a[i] as number) < (b[i] as number) ? -1 : 1;
    return sign(a.length - b.length);
  }
  return 0;
}

/** A map a rule wrote (`{'a': 1}`): the library makes it a plain object. */
export function isMapLiteral(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function mapEntries(value: unknown): Map<unknown, unknown> | undefined {
  if (value instanceof Map) return value;
  return isMapLiteral(value) ? new Map(Object.entries(value)) : undefined;
}

/** Two maps, either written by a rule or converted from JSON: the same keys, equal values. */
function mapEntriesEqual(a: unknown, b: unknown): boolean {
  const x = mapEntries(a);
  const y = mapEntries(b);
  if (!x || !y || x.size !== y.size) return false;
  for (const [k, v] of x) if (!y.has(k) || !celEquals(v, y.get(k))) return false;
  return true;
}

/** CEL runtime equality (heterogeneous: 1 == 1.0, lists and maps element-wise, objects field-wise). */
export function celEquals(a: unknown, b: unknown): boolean {
  // a set or map list compares as the receiver's type says, even with itself (a map list with a repeated key)
  const keyed = keyedListEquals(a, b, celEquals, rawJsonOf);
  if (keyed !== undefined) return keyed;
  if (a === b) return true;
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    // biome-ignore lint/suspicious/noDoubleEquals: CEL compares int and double numerically
    return a == b;
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof Duration && b instanceof Duration) return a.seconds === b.seconds && a.nanos === b.nanos;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return celCompare(a, b) === 0 && a.length === b.length;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => celEquals(x, b[i]));
  if (isMapLiteral(a) || isMapLiteral(b)) return mapEntriesEqual(a, b);
  if (a instanceof Map && b instanceof Map) {
    const asObjects = unstructuredEquals(a, b, celEquals);
    if (asObjects !== undefined) return asObjects;
    if (a.constructor !== b.constructor || a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !celEquals(v, b.get(k))) return false;
    return true;
  }
  if (typeof (a as { equals?: unknown }).equals === 'function') return (a as { equals(o: unknown): boolean }).equals(b);
  return false;
}
