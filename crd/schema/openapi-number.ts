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

/** IsValueValidAgainstRange (values.go): the value fits the type and format, or an error message. */
function rangeError(val: number, valIsInt: boolean, s: SchemaNode, prefix: string, path: string): string | undefined {
  if (s.numberType === '') return undefined;
  if (s.numberType === 'number' && s.numberFormat !== 'float') return undefined;
  if (s.numberType === 'integer' && Number.isSafeInteger(val)) {
    if (s.numberFormat !== 'int32' || (val >= -2147483648 && val <= 2147483647)) return undefined;
  }
  const rep = valIsInt ? BigInt(val).toString() : plainDecimal(val);
  let ok = true;
  if (s.numberType === 'integer') ok = fitsInteger(rep, s.numberFormat === 'int32' ? 32 : 64);
  else if (s.numberFormat === 'float') ok = Math.abs(val) <= FLOAT32_MAX || !Number.isFinite(val);
  if (ok) return undefined;
  const typeName = s.numberType;
  return s.numberFormat !== ''
    ? `${prefix} value must be of type ${typeName} with format ${s.numberFormat} in ${path}`
    : `${prefix} value must be of type ${typeName} (default format) in ${path}`;
}

function multipleOfCheck(
  path: string,
  val: number,
  valIsInt: boolean,
  factor: number,
  asNative: boolean,
): OpenApiError | undefined {
  if (asNative && valIsInt) {
    const f = Math.trunc(factor);
    if (f <= 0)
      return validation(
        MULTIPLE_OF_MUST_BE_POSITIVE,
        path,
        f,
        `factor MultipleOf declared for ${path} must be positive: ${f}`,
      );
    const v = BigInt(val);
    if ((v / BigInt(f)) * BigInt(f) !== v)
      return validation(MULTIPLE_OF, path, val, `${path} in body should be a multiple of ${f}`);
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
  const mult = factor < 1 ? (1 / factor) * val : val / factor;
  if (!isFloat64AJsonInteger(mult)) {
    return validation(MULTIPLE_OF, path, val, `${path} in body should be a multiple of ${goFloat(factor)}`);
  }
  return undefined;
}

function boundCheck(
  path: string,
  val: number,
  valIsInt: boolean,
  bound: number,
  exclusive: boolean,
  asNative: boolean,
  isMax: boolean,
): OpenApiError | undefined {
  const limit = asNative && valIsInt ? Math.trunc(bound) : bound;
  const fails = isMax ? (exclusive ? val >= limit : val > limit) : exclusive ? val <= limit : val < limit;
  if (!fails) return undefined;
  const printed = asNative && valIsInt ? BigInt(limit).toString() : goFloat(limit);
  const relation = isMax
    ? exclusive
      ? 'less than'
      : 'less than or equal to'
    : exclusive
      ? 'greater than'
      : 'greater than or equal to';
  return validation(isMax ? MAX : MIN, path, val, `${path} in body should be ${relation} ${printed}`);
}

/** numberValidator.Validate (validator.go): range, then multipleOf, minimum, maximum. */
export function validateNumber(s: SchemaNode, val: number, path: string, errs: OpenApiError[]): number {
  const valIsInt = isGoInt(val);
  const checked = rangeError(val, valIsInt, s, 'Checked', path);
  if (checked) errs.push(plainError(checked));
  if (s.multipleOf !== undefined) {
    const bad = rangeError(s.multipleOf, false, s, 'MultipleOf', path);
    if (bad) errs.push(plainError(bad));
    const err = multipleOfCheck(path, val, valIsInt, s.multipleOf, !bad);
    if (err) errs.push(err);
  }
  if (s.minimum !== undefined) {
    const bad = rangeError(s.minimum, false, s, 'Minimum boundary', path);
    if (bad) errs.push(plainError(bad));
    const err = boundCheck(path, val, valIsInt, s.minimum, s.exclusiveMinimum, !bad, false);
    if (err) errs.push(err);
  }
  if (s.maximum !== undefined) {
    const bad = rangeError(s.maximum, false, s, 'Maximum boundary', path);
    if (bad) errs.push(plainError(bad));
    const err = boundCheck(path, val, valIsInt, s.maximum, s.exclusiveMaximum, !bad, true);
    if (err) errs.push(err);
  }
  return 1;
}
