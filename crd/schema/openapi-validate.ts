/**
 * kube-openapi's SchemaValidator (pkg/validation/validate) as the API server runs it on custom
 * resources: the same validators in the same order, the same messages, the same match counting for
 * anyOf/oneOf, and CRD validation ratcheting on update (apiextensions validation/ratcheting.go).
 *
 * One difference is deliberate: Go iterates `properties` in random map order, so the API server's
 * order among sibling properties varies from request to request; here it is the schema's order.
 */

import { append } from '../apimachinery/append.ts';
import { goQuote, isGoInt, runeCount } from '../apimachinery/go-format.ts';
import { jsonEqual } from '../apimachinery/json-value.ts';
import type { Correlation } from './correlation.ts';
import type { SchemaNode } from './node.ts';
import {
  ENUM,
  invalidType,
  MAX_ITEMS,
  MIN_ITEMS,
  type OpenApiError,
  PATTERN,
  plainError,
  required,
  TOO_FEW_PROPERTIES,
  TOO_LONG,
  TOO_MANY_PROPERTIES,
  TOO_SHORT,
  UNALLOWED_PROPERTY,
  UNIQUE,
  validation,
} from './openapi-errors.ts';
import { isFloat64AJsonInteger, validateNumber } from './openapi-number.ts';

type Kind = 'string' | 'number' | 'boolean' | 'array' | 'object';

function kindOf(data: unknown): Kind {
  if (Array.isArray(data)) return 'array';
  const t = typeof data;
  if (t === 'string' || t === 'number' || t === 'boolean') return t;
  return 'object';
}

/** typeValidator.schemaInfoForType for decoded JSON. */
function schemaInfo(data: unknown, kind: Kind): [string, string] {
  switch (kind) {
    case 'boolean':
      return ['boolean', ''];
    case 'string':
      return ['string', ''];
    case 'number':
      return isGoInt(data as number) ? ['integer', 'int64'] : ['number', 'float64'];
    case 'array':
      return ['array', ''];
    default:
      return ['object', ''];
  }
}

/** typeValidator.Validate (type.go:132). Returns its match count. */
function validateType(s: SchemaNode, data: unknown, kind: Kind, path: string, errs: OpenApiError[]): number {
  const [schType, format] = schemaInfo(data, kind);
  const types = s.types;
  const isFloatInt = schType === 'number' && isFloat64AJsonInteger(data as number) && types.includes('integer');
  const isIntFloat = schType === 'integer' && types.includes('number');
  if (
    kind !== 'string' &&
    kind !== 'array' &&
    s.format !== '' &&
    !(types.includes(schType) || format === s.format || isFloatInt || isIntFloat)
  ) {
    errs.push(invalidType(path, s.format, format));
    return 0;
  }
  if (
    !(types.includes('number') || types.includes('integer')) &&
    s.format !== '' &&
    (kind === 'string' || kind === 'array')
  ) {
    return 1;
  }
  if (!(types.includes(schType) || isFloatInt || isIntFloat)) {
    errs.push(invalidType(path, s.typeText, schType));
    return 0;
  }
  return 1;
}

/** stringValidator.Validate: the first of maxLength, minLength, pattern that fails. */
function validateString(s: SchemaNode, data: string, path: string, errs: OpenApiError[]): void {
  if (s.maxLength !== undefined || s.minLength !== undefined) {
    const length = runeCount(data);
    if (s.maxLength !== undefined && length > s.maxLength) {
      errs.push(
        validation(TOO_LONG, path, data, `${path} in body should be at most ${s.maxLength} chars long`, {
          valid: s.maxLength,
        }),
      );
      return;
    }
    if (s.minLength !== undefined && length < s.minLength) {
      errs.push(
        validation(TOO_SHORT, path, data, `${path} in body should be at least ${s.minLength} chars long`, {
          valid: s.minLength,
        }),
      );
      return;
    }
  }
  if (s.patternError !== undefined) {
    // validate.Pattern: FailedPattern with the compile error appended to the pattern.
    const pattern = `${s.pattern}, but pattern is invalid: ${s.patternError}`;
    errs.push(validation(PATTERN, path, data, `${path} in body should match '${pattern}'`));
  } else if (s.patternRegexp && !s.patternRegexp.test(data)) {
    errs.push(validation(PATTERN, path, data, `${path} in body should match '${s.pattern}'`));
  }
}

/** The string Go's string(rune(i)) conversion makes of an int64. */
function runeString(i: number): string {
  const valid = i >= 0 && i <= 0x10ffff && !(i >= 0xd800 && i <= 0xdfff);
  return String.fromCodePoint(valid ? i : 0xfffd);
}

/** basicCommonValidator: reflect's ConvertibleTo + DeepEqual against each enum value. */
function enumMatches(data: unknown, enumValue: unknown): boolean {
  if (enumValue === null || enumValue === undefined || data === null || data === undefined) return false;
  switch (typeof enumValue) {
    case 'string':
      if (typeof data === 'string') return data === enumValue;
      return typeof data === 'number' && isGoInt(data) && runeString(data) === enumValue;
    case 'number':
      if (typeof data !== 'number') return false;
      return isGoInt(enumValue) ? Math.trunc(data) === enumValue : data === enumValue;
    case 'boolean':
      return data === enumValue;
    default:
      if (Array.isArray(enumValue) !== Array.isArray(data) || typeof data !== 'object') return false;
      return jsonEqual(data, enumValue);
  }
}

function validateEnum(s: SchemaNode, data: unknown, path: string, errs: OpenApiError[]): void {
  const values = s.enum;
  if (!values) return;
  for (const v of values) if (enumMatches(data, v)) return;
  errs.push(
    validation(ENUM, path, data === undefined ? null : data, `${path} in body should be one of ${values}`, { values }),
  );
}

function validateSlice(
  s: SchemaNode,
  data: unknown[],
  path: string,
  errs: OpenApiError[],
  corr: Correlation | undefined,
): number {
  let count = 0;
  const items = s.items;
  if (items) {
    for (let i = 0; i < data.length; i++) {
      count += validateRatcheted(items, data[i], `${path}[${i}]`, errs, corr?.index(i));
    }
  }
  if (s.minItems !== undefined && data.length < s.minItems) {
    errs.push(validation(MIN_ITEMS, path, data.length, `${path} in body should have at least ${s.minItems} items`));
  }
  if (s.maxItems !== undefined && data.length > s.maxItems) {
    errs.push(
      validation(MAX_ITEMS, path, data.length, `${path} in body should have at most ${s.maxItems} items`, {
        valid: s.maxItems,
      }),
    );
  }
  if (s.uniqueItems) {
    outer: for (let i = 1; i < data.length; i++) {
      for (let j = 0; j < i; j++) {
        if (jsonEqual(data[i], data[j])) {
          errs.push(validation(UNIQUE, path, undefined, `${path} in body shouldn't contain duplicates`));
          break outer;
        }
      }
    }
  }
  return count + 1;
}

function validateObject(
  s: SchemaNode,
  data: Record<string, unknown>,
  path: string,
  errs: OpenApiError[],
  corr: Correlation | undefined,
): number {
  let count = 0;
  const keys = Object.keys(data);
  if (s.minProperties !== undefined && keys.length < s.minProperties) {
    errs.push(
      validation(
        TOO_FEW_PROPERTIES,
        path,
        keys.length,
        `${path} in body should have at least ${s.minProperties} properties`,
      ),
    );
  }
  if (s.maxProperties !== undefined && keys.length > s.maxProperties) {
    errs.push(
      validation(
        TOO_MANY_PROPERTIES,
        path,
        keys.length,
        `${path} in body should have at most ${s.maxProperties} properties`,
        {
          valid: s.maxProperties,
        },
      ),
    );
  }
  const properties = s.properties;
  if (s.additionalPropertiesAllows === false) {
    for (const k of keys) {
      if (!properties?.has(k))
        errs.push(validation(UNALLOWED_PROPERTY, path, k, `${path}.${k} in body is a forbidden property`));
    }
  } else if (s.additionalProperties) {
    for (const k of keys) {
      if (properties?.has(k)) continue;
      count += validateRatcheted(s.additionalProperties, data[k], `${path}.${k}`, errs, corr?.key(k));
    }
  }
  if (properties) {
    for (const [name, prop] of properties) {
      if (!Object.hasOwn(data, name)) continue;
      const childCorr = path === '' && (name === 'kind' || name === 'apiVersion') ? undefined : corr?.key(name);
      count += validateRatcheted(prop, data[name], path === '' ? name : `${path}.${name}`, errs, childCorr);
    }
  }
  for (const k of s.required) {
    if (!Object.hasOwn(data, k)) errs.push(required(`${path}.${k}`));
  }
  return count;
}

interface BranchResult {
  errs: OpenApiError[];
  count: number;
}

function branch(s: SchemaNode, data: unknown, path: string, corr: Correlation | undefined): BranchResult {
  const errs: OpenApiError[] = [];
  const count = validateNode(s, data, path, errs, corr);
  return { errs, count };
}

/** schemaPropsValidator.Validate (schema_props.go): anyOf, oneOf, allOf, not. */
function validateCombinators(
  s: SchemaNode,
  data: unknown,
  path: string,
  errs: OpenApiError[],
  corr: Correlation | undefined,
): number {
  let count = 0;
  const merge = (r: BranchResult) => {
    append(errs, r.errs);
    count += r.count;
  };
  if (s.anyOf.length > 0) {
    let best: BranchResult | undefined;
    let firstSuccess: BranchResult | undefined;
    let succeeded = false;
    for (const sub of s.anyOf) {
      const r = branch(sub, data, path, corr);
      if (r.errs.length === 0) {
        best = undefined;
        succeeded = true;
        firstSuccess ??= r;
        break;
      }
      if (!best || r.count > best.count) best = r;
    }
    if (!succeeded) errs.push(plainError(`${goQuote(path)} must validate at least one schema (anyOf)`));
    if (best) merge(best);
    else if (firstSuccess) merge(firstSuccess);
  }
  if (s.oneOf.length > 0) {
    let best: BranchResult | undefined;
    let firstSuccess: BranchResult | undefined;
    let validated = 0;
    for (const sub of s.oneOf) {
      const r = branch(sub, data, path, corr);
      if (r.errs.length === 0) {
        validated++;
        best = undefined;
        firstSuccess ??= r;
        continue;
      }
      if (validated === 0 && (!best || r.count > best.count)) best = r;
    }
    if (validated !== 1) {
      const detail = validated === 0 ? 'Found none valid' : `Found ${validated} valid alternatives`;
      errs.push(plainError(`${goQuote(path)} must validate one and only one schema (oneOf). ${detail}`));
      if (best) merge(best);
    } else if (firstSuccess) merge(firstSuccess);
  }
  if (s.allOf.length > 0) {
    let validated = 0;
    for (const sub of s.allOf) {
      const r = branch(sub, data, path, corr);
      if (r.errs.length === 0) validated++;
      merge(r);
    }
    if (validated !== s.allOf.length) {
      errs.push(
        plainError(
          `${goQuote(path)} must validate all the schemas (allOf)${validated === 0 ? '. None validated' : ''}`,
        ),
      );
    }
  }
  if (s.not && branch(s.not, data, path, corr).errs.length === 0) {
    errs.push(plainError(`${goQuote(path)} must not validate the schema (not)`));
  }
  return count + 1;
}

/** SchemaValidator.Validate (schema.go): every validator that applies, in kube-openapi's order. */
function validateNode(
  s: SchemaNode,
  data: unknown,
  path: string,
  errs: OpenApiError[],
  corr: Correlation | undefined,
): number {
  if (data === null || data === undefined) {
    let count = 0;
    if (s.types.length > 0 && !s.nullable) errs.push(invalidType(path, s.typeText, 'null'));
    else count = 1;
    validateEnum(s, null, path, errs);
    return count;
  }
  const kind = kindOf(data);
  let count = 0;
  if (s.types.length > 0 || s.format !== '') count += validateType(s, data, kind, path, errs) + 1;
  count += s.hasCombinators ? validateCombinators(s, data, path, errs, corr) + 1 : 2;
  if (kind === 'string') {
    validateString(s, data as string, path, errs);
    count++;
    if (s.formatCheck) {
      if (!s.formatCheck(data as string)) errs.push(invalidType(path, s.format, data));
      count++;
    }
  } else if (kind === 'number') {
    count += validateNumber(s, data as number, path, errs) + 1;
  } else if (kind === 'array') {
    count += validateSlice(s, data as unknown[], path, errs, corr) + 1;
  }
  validateEnum(s, data, path, errs);
  count++;
  if (kind === 'object') count += validateObject(s, data as Record<string, unknown>, path, errs, corr) + 1;
  return count + 1;
}

/** ratchetingValueValidator.Validate: errors in a subtree equal to the old one are dropped. */
function validateRatcheted(
  s: SchemaNode,
  data: unknown,
  path: string,
  errs: OpenApiError[],
  corr: Correlation | undefined,
): number {
  const before = errs.length;
  const count = validateNode(s, data, path, errs, corr);
  if (corr && errs.length > before && corr.deepEqual()) errs.length = before;
  return count;
}

/** Validates a whole object against the root schema; `corr` correlates it with the old object on update. */
export function validateAgainstSchema(root: SchemaNode, object: unknown, corr?: Correlation): OpenApiError[] {
  const errs: OpenApiError[] = [];
  validateRatcheted(root, object, '', errs, corr);
  return dedupe(errs);
}

/** Result.AddErrors keeps one error per message. */
function dedupe(errs: OpenApiError[]): OpenApiError[] {
  if (errs.length < 2) return errs;
  const seen = new Set<string>();
  return errs.filter((e) => {
    if (seen.has(e.message)) return false;
    seen.add(e.message);
    return true;
  });
}
