/**
 * Kubernetes quantity library: quantity, isQuantity, sign, isGreaterThan, isLessThan, compareTo,
 * asApproximateFloat, asInteger, isInteger, add, sub.
 * Source: k8s.io/apiserver@v0.37.2/pkg/cel/library/quantity.go; k8s.io/apimachinery@v0.37.2/pkg/api/resource/quantity.go.
 * A quantity is held exactly as nano-units (values below 1n are rounded up, as ParseQuantity does).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { CelFunctionError, celConversion, celParses } from '../common/errors.ts';

const SPLIT_RE = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
export const ERR_FORMAT_WRONG = `quantities must match the regular expression '${SPLIT_RE}'`;
export const ERR_NUMERIC = 'unable to parse numeric part of quantity';
export const ERR_SUFFIX = "unable to parse quantity's suffix";
const NANO = 1_000_000_000n;
const MAX_INT64 = 2n ** 63n - 1n;
const MIN_INT64 = -(2n ** 63n);

const DECIMAL_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

export class Quantity {
  /** The exact value times 10^9. */
  readonly nanos: bigint;
  constructor(nanos: bigint) {
    this.nanos = nanos;
  }
  equals(other: unknown): boolean {
    return other instanceof Quantity && other.nanos === this.nanos;
  }
}

function divCeilAway(n: bigint, d: bigint): bigint {
  const q = n / d;
  return n % d === 0n ? q : n < 0n ? q - 1n : q + 1n;
}

/** Parses a quantity string as resource.ParseQuantity does; throws the apimachinery error texts. */
export function parseQuantity(str: string): Quantity {
  if (str.length === 0) throw new Error(ERR_FORMAT_WRONG);
  if (str === '0') return new Quantity(0n);
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$/.exec(str);
  if (!m) throw new Error(ERR_FORMAT_WRONG);
  const [, signText = '', whole = '', frac = '', suffix = ''] = m;
  if (whole === '' && frac === '') throw new Error(str.includes('.') ? ERR_NUMERIC : ERR_FORMAT_WRONG);
  if (!/^[eEinumkKMGTP]*[-+]?[0-9]*$/.test(suffix)) throw new Error(ERR_FORMAT_WRONG);
  // numerator over 10^frac.length
  let numerator = BigInt(`${whole || '0'}${frac}`);
  let denominator = 10n ** BigInt(frac.length);
  const decimal = DECIMAL_SUFFIX[suffix];
  const binary = BINARY_SUFFIX[suffix];
  const exponent = /^[eE]([-+]?[0-9]+)$/.exec(suffix);
  if (decimal !== undefined) {
    if (decimal >= 0) numerator *= 10n ** BigInt(decimal);
    else denominator *= 10n ** BigInt(-decimal);
  } else if (binary !== undefined) {
    numerator *= 2n ** BigInt(binary);
  } else if (exponent) {
    const e = Number(exponent[1]);
    if (!Number.isSafeInteger(e) || Math.abs(e) > 1000) throw new Error(ERR_SUFFIX);
    if (e >= 0) numerator *= 10n ** BigInt(e);
    else denominator *= 10n ** BigInt(-e);
  } else {
    throw new Error(ERR_SUFFIX);
  }
  const nanos = divCeilAway(numerator * NANO, denominator);
  return new Quantity(signText === '-' ? -nanos : nanos);
}

function cmp(a: Quantity, b: Quantity): bigint {
  return a.nanos < b.nanos ? -1n : a.nanos > b.nanos ? 1n : 0n;
}

function asInt64(q: Quantity): bigint | undefined {
  if (q.nanos % NANO !== 0n) return undefined;
  const v = q.nanos / NANO;
  return v >= MIN_INT64 && v <= MAX_INT64 ? v : undefined;
}

export function registerQuantity(env: Environment): void {
  env.registerType('kubernetes.Quantity', Quantity);
  env.registerFunction('quantity(string): kubernetes.Quantity', celConversion(parseQuantity));
  env.registerFunction('isQuantity(string): bool', celParses(parseQuantity));
  const Q = 'kubernetes.Quantity';
  env.registerFunction(`sign(${Q}): int`, (q: Quantity) => (q.nanos < 0n ? -1n : q.nanos > 0n ? 1n : 0n));
  env.registerFunction(`${Q}.isGreaterThan(${Q}): bool`, (a: Quantity, b: Quantity) => cmp(a, b) === 1n);
  env.registerFunction(`${Q}.isLessThan(${Q}): bool`, (a: Quantity, b: Quantity) => cmp(a, b) === -1n);
  env.registerFunction(`${Q}.compareTo(${Q}): int`, cmp);
  env.registerFunction(`${Q}.asApproximateFloat(): double`, (q: Quantity) => Number(q.nanos) / 1e9);
  env.registerFunction(`${Q}.isInteger(): bool`, (q: Quantity) => asInt64(q) !== undefined);
  env.registerFunction(`${Q}.asInteger(): int`, (q: Quantity) => {
    const v = asInt64(q);
    if (v === undefined) throw new CelFunctionError('cannot convert value to integer');
    return v;
  });
  env.registerFunction(`${Q}.add(${Q}): ${Q}`, (a: Quantity, b: Quantity) => new Quantity(a.nanos + b.nanos));
  env.registerFunction(`${Q}.add(int): ${Q}`, (a: Quantity, b: bigint) => new Quantity(a.nanos + b * NANO));
  env.registerFunction(`${Q}.sub(${Q}): ${Q}`, (a: Quantity, b: Quantity) => new Quantity(a.nanos - b.nanos));
  env.registerFunction(`${Q}.sub(int): ${Q}`, (a: Quantity, b: bigint) => new Quantity(a.nanos - b * NANO));
}
