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
import { jsonEqual } from '../json-value.ts';
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
  if (t === 'bigint') return 'number';
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
      return isGoInt(data as number | bigint) ? ['integer', 'int64'] : ['number', 'float64'];
    case 'array':
      return ['array', ''];
    default:
      return ['object', ''];
  }
}

/** typeValidator.Validate (type.go:132). Returns its match count. */
function validateType(s: SchemaNode, data: unknown, path: string, errs: OpenApiError[]): number {
  const kind = kindOf(data);
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
      errs.push({
        ...validation(TOO_LONG, path, data, `${path} in body should be at most ${s.maxLength} chars long`),
        valid: s.maxLength,
      });
      return;
    }
    if (s.minLength !== undefined && length < s.minLength) {
      errs.push({
        ...validation(TOO_SHORT, path, data, `${path} in body should be at least ${s.minLength} chars long`),
        valid: s.minLength,
      });
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
      // An exact int64 (a BigInt) equals an int64 enum value exactly, a float64 one converted.
      if (typeof data === 'bigint') return isGoInt(enumValue) ? data === BigInt(enumValue) : Number(data) === enumValue;
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
  errs.push({
    ...validation(ENUM, path, data === undefined ? null : data, `${path} in body should be one of ${values}`),
    values,
  });
}

/** minItems, maxItems, uniqueItems of a list. */
function validateListBounds(s: SchemaNode, data: unknown[], path: string, errs: OpenApiError[]): void {
  if (s.minItems !== undefined && data.length < s.minItems) {
    errs.push(validation(MIN_ITEMS, path, data.length, `${path} in body should have at least ${s.minItems} items`));
  }
  if (s.maxItems !== undefined && data.length > s.maxItems) {
    errs.push({
      ...validation(MAX_ITEMS, path, data.length, `${path} in body should have at most ${s.maxItems} items`),
      valid: s.maxItems,
    });
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
}

/** minProperties, maxProperties of an object. */
function validatePropertyCount(s: SchemaNode, count: number, path: string, errs: OpenApiError[]): void {
  if (s.minProperties !== undefined && count < s.minProperties) {
    errs.push(
      validation(TOO_FEW_PROPERTIES, path, count, `${path} in body should have at least ${s.minProperties} properties`),
    );
  }
  if (s.maxProperties !== undefined && count > s.maxProperties) {
    errs.push({
      ...validation(
        TOO_MANY_PROPERTIES,
        path,
        count,
        `${path} in body should have at most ${s.maxProperties} properties`,
      ),
      valid: s.maxProperties,
    });
  }
}

/**
 * One run of the validator over a value: the errors found so far. Each method validates `data` at `path`
 * against the schema `s`; `corr` correlates `data` with its old value on update. They return kube-openapi's
 * match count (what anyOf and oneOf compare their branches by).
 */
class SchemaWalk {
  readonly errs: OpenApiError[] = [];

  /** SchemaValidator.Validate (schema.go): every validator that applies, in kube-openapi's order. */
  node(s: SchemaNode, data: unknown, path: string, corr: Correlation | undefined): number {
    const errs = this.errs;
    if (data === null || data === undefined) {
      let count = 0;
      if (s.types.length > 0 && !s.nullable) errs.push(invalidType(path, s.typeText, 'null'));
      else count = 1;
      validateEnum(s, null, path, errs);
      return count;
    }
    const kind = kindOf(data);
    let count = 0;
    if (s.types.length > 0 || s.format !== '') count += validateType(s, data, path, errs) + 1;
    count += s.hasCombinators ? this.combinators(s, data, path, corr) + 1 : 2;
    if (kind === 'string') {
      validateString(s, data as string, path, errs);
      count++;
      if (s.formatCheck) {
        if (!s.formatCheck(data as string)) errs.push(invalidType(path, s.format, data));
        count++;
      }
    } else if (kind === 'number') {
      count += validateNumber(s, data as number | bigint, path, errs) + 1;
    } else if (kind === 'array') {
      count += this.list(s, data as unknown[], path, corr) + 1;
    }
    validateEnum(s, data, path, errs);
    count++;
    if (kind === 'object') count += this.object(s, data as Record<string, unknown>, path, corr) + 1;
    return count + 1;
  }

  /** ratchetingValueValidator.Validate: errors in a subtree equal to the old one are dropped. */
  ratcheted(s: SchemaNode, data: unknown, path: string, corr: Correlation | undefined): number {
    const errs = this.errs;
    const before = errs.length;
    const count = this.node(s, data, path, corr);
    if (corr && errs.length > before && corr.deepEqual()) errs.length = before;
    return count;
  }

  /** sliceValidator.Validate: the items, then the list's own bounds. */
  private list(s: SchemaNode, data: unknown[], path: string, corr: Correlation | undefined): number {
    let count = 0;
    const items = s.items;
    if (items) {
      for (let i = 0; i < data.length; i++) count += this.ratcheted(items, data[i], `${path}[${i}]`, corr?.index(i));
    }
    validateListBounds(s, data, path, this.errs);
    return count + 1;
  }

  /** objectValidator.Validate: the property count, unknown or additional properties, properties, required. */
  private object(s: SchemaNode, data: Record<string, unknown>, path: string, corr: Correlation | undefined): number {
    const errs = this.errs;
    let count = 0;
    const keys = Object.keys(data);
    validatePropertyCount(s, keys.length, path, errs);
    const properties = s.properties;
    if (s.additionalPropertiesAllows === false) {
      for (const k of keys) {
        if (!properties?.has(k))
          errs.push(validation(UNALLOWED_PROPERTY, path, k, `${path}.${k} in body is a forbidden property`));
      }
    } else if (s.additionalProperties) {
      for (const k of keys) {
        if (properties?.has(k)) continue;
        count += this.ratcheted(s.additionalProperties, data[k], `${path}.${k}`, corr?.key(k));
      }
    }
    if (properties) {
      for (const [name, prop] of properties) {
        if (!Object.hasOwn(data, name)) continue;
        const childCorr = path === '' && (name === 'kind' || name === 'apiVersion') ? undefined : corr?.key(name);
        count += this.ratcheted(prop, data[name], path === '' ? name : `${path}.${name}`, childCorr);
      }
    }
    for (const k of s.required) {
      if (!Object.hasOwn(data, k)) errs.push(required(`${path}.${k}`));
    }
    return count;
  }

  /** schemaPropsValidator.Validate (schema_props.go): anyOf, oneOf, allOf, not. */
  private combinators(s: SchemaNode, data: unknown, path: string, corr: Correlation | undefined): number {
    let count = 0;
    if (s.anyOf.length > 0) count += this.anyOf(s, data, path, corr);
    if (s.oneOf.length > 0)
      count += this.oneOf(
        s.oneOf.map((sub) => branch(sub, data, path, corr)),
        path,
      );
    if (s.allOf.length > 0)
      count += this.allOf(
        s.allOf.map((sub) => branch(sub, data, path, corr)),
        path,
      );
    if (s.not && branch(s.not, data, path, corr).errs.length === 0) {
      this.errs.push(plainError(`${goQuote(path)} must not validate the schema (not)`));
    }
    return count + 1;
  }

  /** Takes a branch's errors; returns its count. */
  private merge(r: BranchResult): number {
    append(this.errs, r.errs);
    return r.count;
  }

  /** The first branch that validates, else the best one (the highest count) and an error. */
  private anyOf(s: SchemaNode, data: unknown, path: string, corr: Correlation | undefined): number {
    let best: BranchResult | undefined;
    for (const sub of s.anyOf) {
      const r = branch(sub, data, path, corr);
      if (r.errs.length === 0) return this.merge(r);
      if (!best || r.count > best.count) best = r;
    }
    this.errs.push(plainError(`${goQuote(path)} must validate at least one schema (anyOf)`));
    return best ? this.merge(best) : 0;
  }

  private oneOf(results: readonly BranchResult[], path: string): number {
    let best: BranchResult | undefined;
    let firstSuccess: BranchResult | undefined;
    let validated = 0;
    for (const r of results) {
      if (r.errs.length === 0) {
        validated++;
        best = undefined;
        firstSuccess ??= r;
        continue;
      }
      if (validated === 0 && (!best || r.count > best.count)) best = r;
    }
    if (validated === 1) return firstSuccess ? this.merge(firstSuccess) : 0;
    const detail = validated === 0 ? 'Found none valid' : `Found ${validated} valid alternatives`;
    this.errs.push(plainError(`${goQuote(path)} must validate one and only one schema (oneOf). ${detail}`));
    return best ? this.merge(best) : 0;
  }

  private allOf(results: readonly BranchResult[], path: string): number {
    let validated = 0;
    let count = 0;
    for (const r of results) {
      if (r.errs.length === 0) validated++;
      count += this.merge(r);
    }
    if (validated !== results.length) {
      const none = validated === 0 ? '. None validated' : '';
      this.errs.push(plainError(`${goQuote(path)} must validate all the schemas (allOf)${none}`));
    }
    return count;
  }
}

interface BranchResult {
  errs: OpenApiError[];
  count: number;
}

function branch(s: SchemaNode, data: unknown, path: string, corr: Correlation | undefined): BranchResult {
  const walk = new SchemaWalk();
  const count = walk.node(s, data, path, corr);
  return { errs: walk.errs, count };
}

/** Validates a whole object against the root schema; `corr` correlates it with the old object on update. */
export function validateAgainstSchema(root: SchemaNode, object: unknown, corr?: Correlation): OpenApiError[] {
  const walk = new SchemaWalk();
  walk.ratcheted(root, object, '', corr);
  return dedupe(walk.errs);
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
