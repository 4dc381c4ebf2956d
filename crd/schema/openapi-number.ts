/**
 * kube-openapi's numberValidator (validate/validator.go) and its helpers in values.go: the range a
 * type and format allow, then multipleOf, minimum and maximum, each on the int64 or float64 path the
 * decoded value takes.
 */

import { goFloat, isGoInt, plainDecimal } from '../apimachinery/go-format.ts';
import type { SchemaNode } from './node.ts';
import {
  MAX,
  MIN,
  MULTIPLE_OF,
  MULTIPLE_OF_MUST_BE_POSITIVE,
  type OpenApiError,
  plainError,
  validation,
} from './openapi-errors.ts';

const MAX_JSON_FLOAT = 2 ** 53 - 1;
const INT32_MIN = -(2n ** 31n);
const INT32_MAX = 2n ** 31n - 1n;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const FLOAT32_MAX = 3.4028234663852886e38;

/** swag.IsFloat64AJSONInteger. */
export function isFloat64AJsonInteger(f: number): boolean {
  if (!Number.isFinite(f) || f < -MAX_JSON_FLOAT || f > MAX_JSON_FLOAT) return false;
  const rounded = Math.round(f);
  if (f === rounded) return true;
  if (rounded === 0) return false;
  const diff = Math.abs(f - rounded);
  return diff === 0 || diff < 1e-9 * Math.abs(rounded);
}

/** strconv.ParseInt of the value's decimal form fits the bit size. */
function fitsInteger(rep: string, bits: 32 | 64): boolean {
  if (!/^[+-]?[0-9]+$/.test(rep)) return false;
  const n = BigInt(rep);
  return bits === 32 ? n >= INT32_MIN && n <= INT32_MAX : n >= INT64_MIN && n <= INT64_MAX;
}

/**
 * A decoded number under validation: its schema, path, value (an int64 beyond 2^53 is a BigInt) and
 * whether Go decoded it as an int64.
 */
interface NumberCheck {
  s: SchemaNode;
  path: string;
  val: number | bigint;
  valIsInt: boolean;
}

/**
 * IsValueValidAgainstRange (values.go): whether `value` (the number itself, or a multipleOf, minimum or
 * maximum of its schema) fits the type and format; else the message, starting with `prefix`.
 */
function rangeError(c: NumberCheck, value: number | bigint, valueIsInt: boolean, prefix: string): string | undefined {
  const s = c.s;
  if (s.numberType === '') return undefined;
  if (s.numberType === 'number' && s.numberFormat !== 'float') return undefined;
  if (s.numberType === 'integer' && Number.isSafeInteger(value)) {
    if (s.numberFormat !== 'int32' || (value >= -2147483648 && value <= 2147483647)) return undefined;
  }
  const rep = valueIsInt || typeof value === 'bigint' ? BigInt(value).toString() : plainDecimal(value);
  let ok = true;
  if (s.numberType === 'integer') ok = fitsInteger(rep, s.numberFormat === 'int32' ? 32 : 64);
  else if (s.numberFormat === 'float') ok = Math.abs(Number(value)) <= FLOAT32_MAX || !Number.isFinite(value);
  if (ok) return undefined;
  const typeName = s.numberType;
  return s.numberFormat !== ''
    ? `${prefix} value must be of type ${typeName} with format ${s.numberFormat} in ${c.path}`
    : `${prefix} value must be of type ${typeName} (default format) in ${c.path}`;
}

/** The schema's value (multipleOf, minimum, maximum) as a bound, or the range error that keeps it a float64. */
function schemaBound(c: NumberCheck, bound: number, prefix: string, errs: OpenApiError[]): boolean {
  const bad = rangeError(c, bound, false, prefix);
  if (bad) errs.push(plainError(bad));
  // an int64 value is compared with the bound truncated to an int64, unless the bound is out of range
  return !bad && c.valIsInt;
}

/** multipleOf, on the int64 path (`asInt`) or the float64 one. */
function multipleOfError(c: NumberCheck, factor: number, asInt: boolean): OpenApiError | undefined {
  const { path, val } = c;
  if (asInt) {
    const f = Math.trunc(factor);
    if (f <= 0)
      return validation(
        MULTIPLE_OF_MUST_BE_POSITIVE,
        path,
        f,
        `factor MultipleOf declared for ${path} must be positive: ${f}`,
      );
    const v = BigInt(val);
    if (v % BigInt(f) !== 0n) return validation(MULTIPLE_OF, path, val, `${path} in body should be a multiple of ${f}`);
    return undefined;
  }
  if (factor <= 0) {
    return validation(
      MULTIPLE_OF_MUST_BE_POSITIVE,
      path,
      factor,
      `factor MultipleOf declared for ${path} must be positive: ${goFloat(factor)}`,
    );
  }
  const asFloat = Number(val);
  const mult = factor < 1 ? (1 / factor) * asFloat : asFloat / factor;
  if (!isFloat64AJsonInteger(mult)) {
    return validation(MULTIPLE_OF, path, val, `${path} in body should be a multiple of ${goFloat(factor)}`);
  }
  return undefined;
}

/** minimum or maximum, with their exclusive flags and texts. */
interface Bound {
  prefix: string;
  code: number;
  limit(s: SchemaNode): number | undefined;
  exclusive(s: SchemaNode): boolean;
  /** Whether the value is beyond the limit (a BigInt and a number compare exactly). */
  exceeds(val: number | bigint, limit: number, exclusive: boolean): boolean;
  relation(exclusive: boolean): string;
}

const MINIMUM: Bound = {
  prefix: 'Minimum boundary',
  code: MIN,
  limit: (s) => s.minimum,
  exclusive: (s) => s.exclusiveMinimum,
  exceeds: (val, limit, exclusive) => (exclusive ? val <= limit : val < limit),
  relation: (exclusive) => (exclusive ? 'greater than' : 'greater than or equal to'),
};

const MAXIMUM: Bound = {
  prefix: 'Maximum boundary',
  code: MAX,
  limit: (s) => s.maximum,
  exclusive: (s) => s.exclusiveMaximum,
  exceeds: (val, limit, exclusive) => (exclusive ? val >= limit : val > limit),
  relation: (exclusive) => (exclusive ? 'less than' : 'less than or equal to'),
};

function checkBound(c: NumberCheck, bound: Bound, errs: OpenApiError[]): void {
  const declared = bound.limit(c.s);
  if (declared === undefined) return;
  const asInt = schemaBound(c, declared, bound.prefix, errs);
  const limit = asInt ? Math.trunc(declared) : declared;
  const exclusive = bound.exclusive(c.s);
  // Go compares an int64 with the bound truncated to an int64, a float64 with the float64 bound.
  if (!bound.exceeds(asInt ? c.val : Number(c.val), limit, exclusive)) return;
  const printed = asInt ? BigInt(limit).toString() : goFloat(limit);
  errs.push(
    validation(bound.code, c.path, c.val, `${c.path} in body should be ${bound.relation(exclusive)} ${printed}`),
  );
}

/** numberValidator.Validate (validator.go): range, then multipleOf, minimum, maximum. */
export function validateNumber(s: SchemaNode, val: number | bigint, path: string, errs: OpenApiError[]): number {
  const c: NumberCheck = { s, path, val, valIsInt: isGoInt(val) };
  const checked = rangeError(c, val, c.valIsInt, 'Checked');
  if (checked) errs.push(plainError(checked));
  if (s.multipleOf !== undefined) {
    const err = multipleOfError(c, s.multipleOf, schemaBound(c, s.multipleOf, 'MultipleOf', errs));
    if (err) errs.push(err);
  }
  checkBound(c, MINIMUM, errs);
  checkBound(c, MAXIMUM, errs);
  return 1;
}
