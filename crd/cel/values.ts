/**
 * JSON (unstructured) values -> CEL runtime values for @marcbachmann/cel-js, driven by the CEL declaration type:
 * integer -> BigInt, number -> double, date-time -> timestamp (Date), duration -> Duration, byte -> Uint8Array,
 * objects with properties -> typed object instances, additionalProperties -> Map, arrays -> arrays.
 * Source: k8s.io/apiserver@v0.37.2/pkg/cel/common/valuesunstructured.go (UnstructuredToVal).
 */
import { Base64CorruptInputError, decodeGoBase64Url } from '../apimachinery/go-base64.ts';
import type { DeclType, ObjectDeclType } from './decl-types.ts';
import { parseDuration } from './duration.ts';

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
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (typeof value === 'bigint') return value;
  return value;
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
  if (typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value))) return 'int64';
  if (typeof value === 'number') return 'float64';
  if (typeof value === 'boolean') return 'bool';
  return 'map[string]interface {}';
}

const STRING_KINDS: ReadonlySet<string> = new Set(['string', 'bytes', 'timestamp', 'duration']);

/** Converts one JSON value to its CEL runtime form according to `type`. */
export function toCelValue(value: unknown, type: DeclType, classes: ObjectClassLookup): unknown {
  if (value === null || value === undefined) return null;
  if (STRING_KINDS.has(type.kind) && Array.isArray(value)) {
    // what OpenAPI lets through under type: string (kube-openapi's type validator skips slices)
    const invalid = new CelValueError(`invalid data, expected string, got ${goTypeName(value)}`);
    invalid.evaluating = true;
    throw invalid;
  }
  switch (type.kind) {
    case 'int':
      return toInt(value);
    case 'double':
      return typeof value === 'bigint' ? Number(value) : value;
    case 'bool':
    case 'string':
      return value;
    case 'dyn':
      return typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : plainToCel(value);
    case 'bytes':
      return typeof value === 'string' ? base64ToBytes(value) : value;
    case 'timestamp':
      return typeof value === 'string' ? new Date(value) : value;
    case 'duration': {
      if (typeof value !== 'string') return value;
      const d = parseDuration(value);
      if (!d) throw new CelValueError(`time: invalid duration "${value}"`);
      return d;
    }
    case 'list':
      return Array.isArray(value) ? value.map((v) => toCelValue(v, type.elem, classes)) : value;
    case 'map': {
      if (typeof value !== 'object' || Array.isArray(value)) return value;
      const out = new Map<string, unknown>();
      for (const [k, v] of Object.entries(value as Record<string, unknown>))
        out.set(k, toCelValue(v, type.elem, classes));
      return out;
    }
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) return value;
      const Ctor = classes(type);
      const out = new Ctor();
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        const field = type.byProperty.get(k);
        if (field) out.set(field.celName, toCelValue(v, field.type, classes));
      }
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
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
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
      return (v) => (v === undefined ? null : v);
    case 'int':
      return (v) => (v === null || v === undefined ? null : toInt(v));
    case 'list': {
      const elem = converterFor(type.elem, classes);
      return (v) => (Array.isArray(v) ? v.map(elem) : v === undefined ? null : v);
    }
    case 'map': {
      const elem = converterFor(type.elem, classes);
      return (v) => {
        if (v === null || v === undefined) return null;
        if (typeof v !== 'object' || Array.isArray(v)) return v;
        const out = new Map<string, unknown>();
        for (const k in v) if (Object.hasOwn(v, k)) out.set(k, elem((v as Record<string, unknown>)[k]));
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
          if (field && Object.hasOwn(v, k)) out.set(field.celName, field.convert((v as Record<string, unknown>)[k]));
        }
        return out;
      };
    }
    default:
      return (v) => toCelValue(v, type, classes);
  }
}
