/**
 * JSON (unstructured) values -> CEL runtime values for @marcbachmann/cel-js, driven by the CEL declaration type:
 * integer -> BigInt, number -> double, date-time -> timestamp (Date), duration -> Duration, byte -> Uint8Array,
 * objects with properties -> typed object instances, additionalProperties -> Map, arrays -> arrays.
 * Source: k8s.io/apiserver@v0.37.2/pkg/cel/common/valuesunstructured.go (UnstructuredToVal).
 */

import type { Duration } from '@marcbachmann/cel-js/evaluator';
import type { JSONSchemaProps } from '../apiextensions.ts';
import { Base64CorruptInputError, decodeGoBase64Url } from '../apimachinery/go-base64.ts';
import { isGoInt } from '../apimachinery/go-format.ts';
import { parseFullDate, parseStrfmtDateTime } from '../apimachinery/strfmt-date-time.ts';
import { parseStrfmtDuration } from '../apimachinery/strfmt-duration.ts';
import { durationFromNanos } from './common/duration.ts';
import { tagMapList, tagSetList } from './common/list-semantics.ts';
import { keepUnstructured } from './common/unstructured-object.ts';
import type { DeclType, ObjectDeclType } from './decl-types.ts';

/** The runtime class of one CEL object type: a Map from CEL field name to value. */
export type ObjectClass = new () => Map<string, unknown>;

/** Resolves the runtime class registered for an object declaration type. */
export type ObjectClassLookup = (decl: ObjectDeclType) => ObjectClass;

/** A value a JSON document cannot hold as the schema says (the API server reports these as CEL errors). */
export class CelValueError extends Error {
  override name = 'CelValueError';
  /** An error value (types.NewErr) a rule meets as it evaluates: "<message> evaluating rule: <rule>". */
  evaluating = false;
}

function toInt(value: unknown): unknown {
  if (typeof value === 'number' && isGoInt(value)) return BigInt(value);
  if (typeof value === 'bigint') return value;
  return value;
}

/** A `format: duration` string as the API server's CEL value reads it (strfmt.ParseDuration), else its error value. */
function strfmtDuration(value: string): Duration {
  const parsed = parseStrfmtDuration(value);
  if ('nanos' in parsed) return durationFromNanos(parsed.nanos);
  const invalid = new CelValueError(`Invalid duration ${value}: ${parsed.error}`);
  invalid.evaluating = true;
  throw invalid;
}

/** A `format: date` or `date-time` string as the API server's CEL value reads it, else its error value. */
function strfmtTimestamp(value: string, format: string | undefined): Date {
  const date = format === 'date';
  const parsed = date ? parseFullDate(value) : parseStrfmtDateTime(value);
  if ('time' in parsed) return parsed.time;
  const invalid = new CelValueError(
    `Invalid ${date ? 'date' : 'date-time'} formatted string ${value}: ${parsed.error}`,
  );
  invalid.evaluating = true;
  throw invalid;
}

function base64ToBytes(value: string): Uint8Array {
  try {
    return decodeGoBase64Url(value);
  } catch (error) {
    if (!(error instanceof Base64CorruptInputError)) throw error;
    const invalid = new CelValueError(`Invalid byte formatted string ${value}: ${error.message}`);
    invalid.evaluating = true;
    throw invalid;
  }
}

/** Go's %T of a decoded JSON value. */
function goTypeName(value: unknown): string {
  if (Array.isArray(value)) return '[]interface {}';
  if (typeof value === 'bigint' || (typeof value === 'number' && isGoInt(value))) return 'int64';
  if (typeof value === 'number') return 'float64';
  if (typeof value === 'boolean') return 'bool';
  return 'map[string]interface {}';
}

const isNumber = (v: unknown) => typeof v === 'number' || typeof v === 'bigint';
/** What UnstructuredToVal expects of a scalar's decoded JSON, by CEL kind, and the name it gives it. */
const SCALARS: Record<string, [string, (v: unknown) => boolean]> = {
  string: ['string', (v) => typeof v === 'string'],
  bytes: ['string', (v) => typeof v === 'string'],
  timestamp: ['string', (v) => typeof v === 'string'],
  duration: ['string', (v) => typeof v === 'string'],
  bool: ['bool', (v) => typeof v === 'boolean'],
  int: ['int', (v) => typeof v === 'bigint' || (typeof v === 'number' && isGoInt(v))],
  double: ['float', isNumber],
};

/**
 * A scalar of the wrong type is an error value in the API server's CEL values (it reaches the rules only
 * where OpenAPI let it through, as an array under a formatted string): "invalid data, expected string, got
 * []interface {}", met by the node's rules.
 */
function checkScalar(kind: string, value: unknown): void {
  const expected = SCALARS[kind];
  if (!expected || expected[1](value)) return;
  const invalid = new CelValueError(`invalid data, expected ${expected[0]}, got ${goTypeName(value)}`);
  invalid.evaluating = true;
  throw invalid;
}

/**
 * The error value a wrong-typed scalar is below the value a rule gets as self: cel-go gives the rule
 * that error only when the rule reads it. The library reports using one as "Unsupported type: InvalidData".
 */
export class InvalidData {
  readonly message: string;
  constructor(message: string) {
    this.message = message;
  }
}

/** The first InvalidData in a converted value, depth first. */
export function firstInvalidData(value: unknown): InvalidData | undefined {
  if (value instanceof InvalidData) return value;
  if (Array.isArray(value)) {
    for (const v of value) {
      const found = firstInvalidData(v);
      if (found) return found;
    }
  } else if (value instanceof Map) {
    for (const v of value.values()) {
      const found = firstInvalidData(v);
      if (found) return found;
    }
  }
  return undefined;
}

/** A value below self: an InvalidData where the conversion meets a wrong-typed scalar. */
function nested(convert: (v: unknown) => unknown, value: unknown): unknown {
  try {
    return convert(value);
  } catch (error) {
    if (error instanceof CelValueError && error.evaluating) return new InvalidData(error.message);
    throw error;
  }
}

/** A converted list of a set or map list type, marked for the API server's equality and addition. */
function keyedList(schema: JSONSchemaProps, list: unknown[], raw: readonly unknown[]): unknown[] {
  const listType = schema['x-kubernetes-list-type'];
  if (listType === 'set') return tagSetList(list);
  if (listType === 'map') return tagMapList(list, schema['x-kubernetes-list-map-keys'] ?? [], raw);
  return list;
}

/** Converts one JSON value to its CEL runtime form according to `type`. */
export function toCelValue(value: unknown, type: DeclType, classes: ObjectClassLookup): unknown {
  if (value === null || value === undefined) return null;
  checkScalar(type.kind, value);
  switch (type.kind) {
    case 'int':
      return toInt(value);
    case 'double':
      return typeof value === 'bigint' ? Number(value) : value;
    case 'bool':
    case 'string':
      return value;
    case 'dyn':
      return typeof value === 'number' && isGoInt(value) ? BigInt(value) : plainToCel(value);
    case 'bytes':
      return typeof value === 'string' ? base64ToBytes(value) : value;
    case 'timestamp':
      return typeof value === 'string' ? strfmtTimestamp(value, type.schema.format) : value;
    case 'duration':
      return typeof value === 'string' ? strfmtDuration(value) : value;
    case 'list':
      return Array.isArray(value)
        ? keyedList(
            type.schema,
            value.map((v) => nested((x) => toCelValue(x, type.elem, classes), v)),
            value,
          )
        : value;
    case 'map': {
      if (typeof value !== 'object' || Array.isArray(value)) return value;
      const out = new Map<string, unknown>();
      for (const [k, v] of Object.entries(value as Record<string, unknown>))
        out.set(
          k,
          nested((x) => toCelValue(x, type.elem, classes), v),
        );
      return out;
    }
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) return value;
      const Ctor = classes(type);
      const out = new Ctor();
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        const field = type.byProperty.get(k);
        // unstructuredMap.Find: a null field of an object with properties is an absent one
        if (field && v !== null)
          out.set(
            field.celName,
            nested((x) => toCelValue(x, field.type, classes), v),
          );
      }
      keepUnstructured(out, value as Record<string, unknown>, type.byProperty);
      return out;
    }
  }
}

/**
 * Converts JSON without a schema (the CLI without --schema): integers become int, other numbers double,
 * objects maps with string keys, arrays lists.
 */
export function plainToCel(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return isGoInt(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(plainToCel);
  if (typeof value === 'object') {
    const out = new Map<string, unknown>();
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out.set(k, plainToCel(v));
    return out;
  }
  return value;
}

/** A converter for one declaration type, with the per-type decisions taken once (used on the admission path). */
export type ValueConverter = (value: unknown) => unknown;

/** Builds the converter for `type`; equivalent to toCelValue(value, type, classes). */
export function converterFor(type: DeclType, classes: ObjectClassLookup): ValueConverter {
  switch (type.kind) {
    case 'bool':
    case 'string':
      return (v) => {
        if (v === undefined || v === null) return null;
        checkScalar(type.kind, v);
        return v;
      };
    case 'int':
      return (v) => {
        if (v === null || v === undefined) return null;
        checkScalar(type.kind, v);
        return toInt(v);
      };
    case 'list': {
      const elem = converterFor(type.elem, classes);
      return (v) =>
        Array.isArray(v)
          ? keyedList(
              type.schema,
              v.map((x) => nested(elem, x)),
              v,
            )
          : v === undefined
            ? null
            : v;
    }
    case 'map': {
      const elem = converterFor(type.elem, classes);
      return (v) => {
        if (v === null || v === undefined) return null;
        if (typeof v !== 'object' || Array.isArray(v)) return v;
        const out = new Map<string, unknown>();
        for (const k in v) if (Object.hasOwn(v, k)) out.set(k, nested(elem, (v as Record<string, unknown>)[k]));
        return out;
      };
    }
    case 'object': {
      const Ctor = classes(type);
      const fields = new Map<string, { celName: string; convert: ValueConverter }>();
      for (const [name, field] of type.byProperty) {
        fields.set(name, { celName: field.celName, convert: converterFor(field.type, classes) });
      }
      return (v) => {
        if (v === null || v === undefined) return null;
        if (typeof v !== 'object' || Array.isArray(v)) return v;
        const out = new Ctor();
        for (const k in v) {
          const field = fields.get(k);
          const value = (v as Record<string, unknown>)[k];
          if (field && Object.hasOwn(v, k) && value !== null) out.set(field.celName, nested(field.convert, value));
        }
        keepUnstructured(out, v as Record<string, unknown>, type.byProperty);
        return out;
      };
    }
    default:
      return (v) => toCelValue(v, type, classes);
  }
}
