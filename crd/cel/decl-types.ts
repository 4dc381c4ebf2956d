/**
 * OpenAPI v3 structural schema -> CEL declaration types, the way the API server derives them.
 * Source: k8s.io/apiserver@v0.37.2/pkg/cel/common/schemas.go (SchemaDeclType, WithTypeAndObjectMeta),
 * k8s.io/apiserver@v0.37.2/pkg/cel/limits.go and types.go (sizes).
 */
import type { JSONSchemaProps } from '../apiextensions.ts';
import { escapePropertyName } from './escape.ts';

/** 3 MiB: celconfig.MaxRequestSizeBytes. */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;
const MAX_DURATION_SIZE_JSON = 32;
const MAX_DATETIME_SIZE_JSON = 32;
const MIN_DURATION_SIZE_JSON = 3;
const JSON_DATE_SIZE = 12;
const MIN_DATETIME_SIZE_JSON = 21;
const MIN_STRING_SIZE = 2;
const MIN_BOOL_SIZE = 4;
const MIN_NUMBER_SIZE = 1;

export type ScalarKind = 'int' | 'double' | 'bool' | 'string' | 'bytes' | 'timestamp' | 'duration' | 'dyn';

interface DeclBase {
  /** Upper bound of elements (list items, map entries, string length) used by cost estimation. */
  maxElements: number;
  /** Smallest JSON serialization of a value of this type, in bytes. */
  minSerializedSize: number;
  /** The schema node this type was derived from (after root/embedded-resource metadata narrowing). */
  schema: JSONSchemaProps;
}

export interface ScalarDeclType extends DeclBase {
  kind: ScalarKind;
}
export interface ListDeclType extends DeclBase {
  kind: 'list';
  elem: DeclType;
}
export interface MapDeclType extends DeclBase {
  kind: 'map';
  elem: DeclType;
}
export interface ObjectField {
  /** The property name in JSON. */
  name: string;
  /** The (escaped) name CEL code uses. */
  celName: string;
  type: DeclType;
  required: boolean;
}
export interface ObjectDeclType extends DeclBase {
  kind: 'object';
  /** Fields by CEL (escaped) name. */
  fields: Map<string, ObjectField>;
  /** Fields by JSON property name. */
  byProperty: Map<string, ObjectField>;
  /** True at the root of a resource or an embedded resource: only apiVersion, kind, metadata.name/generateName are visible. */
  resourceRoot: boolean;
}
export type DeclType = ScalarDeclType | ListDeclType | MapDeclType | ObjectDeclType;

function scalar(kind: ScalarKind, schema: JSONSchemaProps, minSerializedSize: number, maxElements = 0): ScalarDeclType {
  return { kind, schema, minSerializedSize, maxElements };
}

const STRING: JSONSchemaProps = { type: 'string' };

/**
 * The schema as the API server sees it at a resource root: apiVersion and kind are strings and metadata
 * only has name and generateName (common.WithTypeAndObjectMeta).
 */
export function withTypeAndObjectMeta(schema: JSONSchemaProps): JSONSchemaProps {
  const p = schema.properties;
  if (
    p?.kind?.type === 'string' &&
    p.apiVersion?.type === 'string' &&
    p.metadata?.type === 'object' &&
    p.metadata.properties?.name?.type === 'string' &&
    p.metadata.properties.generateName?.type === 'string'
  ) {
    return schema;
  }
  return {
    ...schema,
    properties: {
      ...(p ?? {}),
      kind: STRING,
      apiVersion: STRING,
      metadata: { type: 'object', properties: { name: STRING, generateName: STRING } },
    },
  };
}

function maxElementsFromMaxLength(s: JSONSchemaProps): number {
  return Math.max(0, s.maxLength ?? 0) * 4;
}

function maxStringLengthPerRequest(s: JSONSchemaProps): number {
  if (s['x-kubernetes-int-or-string']) return MAX_REQUEST_SIZE_BYTES - 2;
  switch (s.format) {
    case 'duration':
      return MAX_DURATION_SIZE_JSON;
    case 'date':
      return JSON_DATE_SIZE;
    case 'date-time':
      return MAX_DATETIME_SIZE_JSON;
    default:
      return MAX_REQUEST_SIZE_BYTES - 2;
  }
}

function stringType(s: JSONSchemaProps): ScalarDeclType {
  switch (s.format) {
    case 'byte':
      return scalar(
        'bytes',
        s,
        MIN_STRING_SIZE,
        s.maxLength !== undefined ? Math.max(0, s.maxLength) : maxStringLengthPerRequest(s),
      );
    case 'duration':
      return scalar('duration', s, MIN_DURATION_SIZE_JSON, maxStringLengthPerRequest(s));
    case 'date':
      return scalar('timestamp', s, JSON_DATE_SIZE, maxStringLengthPerRequest(s));
    case 'date-time':
      return scalar('timestamp', s, MIN_DATETIME_SIZE_JSON, maxStringLengthPerRequest(s));
  }
  let maxElements: number;
  if (s.maxLength !== undefined) maxElements = maxElementsFromMaxLength(s);
  else if (s.enum && s.enum.length > 0)
    maxElements = Math.max(0, ...s.enum.map((v) => (typeof v === 'string' ? Buffer.byteLength(v) : 0)));
  else maxElements = maxStringLengthPerRequest(s);
  return scalar('string', s, MIN_STRING_SIZE, maxElements);
}

/**
 * A list's or map's bound: the declared maxItems/maxProperties, else as many of the smallest elements as
 * fit in a request, each taking `separatorBytes` more (a comma; a map key's quotes, colon and comma).
 */
function maxElementsOf(declared: number | undefined, elem: DeclType, separatorBytes: number): number {
  if (declared !== undefined) return Math.max(0, declared);
  return Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (elem.minSerializedSize + separatorBytes));
}

/**
 * The CEL type of a schema node, or undefined when the node has no CEL representation
 * (an array without items, an object whose additionalProperties has no type, ...).
 */
export function schemaDeclType(input: JSONSchemaProps, isResourceRoot: boolean): DeclType | undefined {
  if (input['x-kubernetes-int-or-string']) {
    const maxElements =
      input.maxLength !== undefined ? maxElementsFromMaxLength(input) : maxStringLengthPerRequest(input);
    return scalar('dyn', input, 1, maxElements);
  }
  const s = isResourceRoot ? withTypeAndObjectMeta(input) : input;
  switch (s.type) {
    case 'array': {
      if (!s.items) return undefined;
      const elem = schemaDeclType(s.items, s.items['x-kubernetes-embedded-resource'] === true);
      if (!elem) return undefined;
      const maxElements = maxElementsOf(s.maxItems, elem, 1);
      return { kind: 'list', elem, schema: s, maxElements, minSerializedSize: 2 };
    }
    case 'object': {
      const ap = s.additionalProperties;
      if (ap !== undefined && typeof ap === 'object') {
        const elem = schemaDeclType(ap, ap['x-kubernetes-embedded-resource'] === true);
        if (!elem) return undefined;
        const maxElements = maxElementsOf(s.maxProperties, elem, 6);
        return { kind: 'map', elem, schema: s, maxElements, minSerializedSize: 2 };
      }
      const required = new Set(s.required ?? []);
      const fields = new Map<string, ObjectField>();
      const byProperty = new Map<string, ObjectField>();
      let minSerializedSize = 2;
      for (const [name, prop] of Object.entries(s.properties ?? {})) {
        const type = schemaDeclType(prop, prop['x-kubernetes-embedded-resource'] === true);
        if (!type) continue;
        const celName = escapePropertyName(name);
        if (celName !== undefined) {
          const field: ObjectField = { name, celName, type, required: required.has(name) };
          fields.set(celName, field);
          byProperty.set(name, field);
        }
        if (required.has(name) && prop.default === undefined) {
          minSerializedSize += Buffer.byteLength(name) + type.minSerializedSize + 4;
        }
      }
      return {
        kind: 'object',
        fields,
        byProperty,
        schema: s,
        resourceRoot: isResourceRoot,
        maxElements: 0,
        minSerializedSize,
      };
    }
    case 'string':
      return stringType(s);
    case 'boolean':
      return scalar('bool', s, MIN_BOOL_SIZE);
    case 'number':
      return scalar('double', s, MIN_NUMBER_SIZE);
    case 'integer':
      return scalar('int', s, MIN_NUMBER_SIZE);
  }
  return undefined;
}
