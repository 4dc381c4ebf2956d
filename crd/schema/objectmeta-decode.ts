/**
 * metav1.ObjectMeta decoded the way the API server decodes it inside a custom resource: into the typed
 * struct and written back (objectmeta/coerce.go GetObjectMetaWithOptions + SetObjectMeta), so unknown
 * fields are dropped and reported, empty ones omitted, times normalised, and a field of the wrong type
 * fails with encoding/json's message.
 */

import { compareGoStrings, isGoInt } from '../apimachinery/go-format.ts';
import { parseRfc3339 } from '../apimachinery/go-time.ts';
import { isJsonObject, type JsonObject, setKey } from '../json-value.ts';

type FieldKind = 'string' | 'int64' | 'bool' | 'time' | 'stringMap' | 'stringList' | 'raw' | StructKind | ListKind;

interface StructKind {
  struct: string;
  fields: Readonly<Record<string, FieldKind>>;
}

interface ListKind {
  listOf: StructKind;
}

const OWNER_REFERENCE: StructKind = {
  struct: 'OwnerReference',
  fields: {
    apiVersion: 'string',
    kind: 'string',
    name: 'string',
    uid: 'string',
    controller: 'bool',
    blockOwnerDeletion: 'bool',
  },
};

const MANAGED_FIELDS_ENTRY: StructKind = {
  struct: 'ManagedFieldsEntry',
  fields: {
    manager: 'string',
    operation: 'string',
    apiVersion: 'string',
    time: 'time',
    fieldsType: 'string',
    fieldsV1: 'raw',
    subresource: 'string',
  },
};

/** metav1.ObjectMeta's JSON fields and how each decodes. */
const OBJECT_META: StructKind = {
  struct: 'ObjectMeta',
  fields: {
    name: 'string',
    generateName: 'string',
    namespace: 'string',
    selfLink: 'string',
    uid: 'string',
    resourceVersion: 'string',
    generation: 'int64',
    creationTimestamp: 'time',
    deletionTimestamp: 'time',
    deletionGracePeriodSeconds: 'int64',
    labels: 'stringMap',
    annotations: 'stringMap',
    ownerReferences: { listOf: OWNER_REFERENCE },
    finalizers: 'stringList',
    managedFields: { listOf: MANAGED_FIELDS_ENTRY },
  },
};

/** The Go type name encoding/json prints for a field kind. */
function goTypeOf(kind: FieldKind): string {
  if (typeof kind === 'object') return 'listOf' in kind ? `[]v1.${kind.listOf.struct}` : `v1.${kind.struct}`;
  return {
    string: 'string',
    int64: 'int64',
    bool: 'bool',
    time: 'string',
    stringMap: 'map[string]string',
    stringList: '[]string',
    raw: '',
  }[kind];
}

/** The "Value" encoding/json names in an UnmarshalTypeError. */
function jsonValueName(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number' || typeof v === 'bigint') return 'number';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

export class MetadataDecodeError extends Error {
  override name = 'MetadataDecodeError';
}

/** Where a value sits while decoding: the Go struct it belongs to and the JSON field path from the root. */
interface Site {
  struct: string;
  field: string;
  /** The path for unknown-field reports, e.g. `metadata.ownerReferences[0]`. */
  path: string;
}

function typeError(site: Site, v: unknown, goType: string): MetadataDecodeError {
  return new MetadataDecodeError(
    `json: cannot unmarshal ${jsonValueName(v)} into Go struct field ${site.struct}.${site.field} of type ${goType}`,
  );
}

function decodeValue(kind: FieldKind, v: unknown, site: Site, unknown: string[]): unknown {
  if (v === null) return undefined;
  if (typeof kind === 'object') {
    if ('listOf' in kind) {
      if (!Array.isArray(v)) throw typeError(site, v, goTypeOf(kind));
      return v.map((item, i) => {
        if (item === null) return {};
        if (!isJsonObject(item)) throw typeError(site, item, goTypeOf(kind.listOf));
        return decodeStruct(kind.listOf, item, { ...site, path: `${site.path}[${i}]` }, unknown);
      });
    }
    if (!isJsonObject(v)) throw typeError(site, v, goTypeOf(kind));
    return decodeStruct(kind, v, site, unknown);
  }
  switch (kind) {
    case 'string':
      if (typeof v !== 'string') throw typeError(site, v, 'string');
      return v;
    case 'bool':
      if (typeof v !== 'boolean') throw typeError(site, v, 'bool');
      return v;
    case 'int64':
      if (typeof v === 'bigint') return v;
      if (typeof v !== 'number') throw typeError(site, v, 'int64');
      if (!isGoInt(v)) {
        throw new MetadataDecodeError(
          `json: cannot unmarshal number ${JSON.stringify(v)} into Go struct field ${site.struct}.${site.field} of type int64`,
        );
      }
      return v;
    case 'time': {
      // Time.UnmarshalJSON's own json.Unmarshal error gets the decoder's struct context added.
      if (typeof v !== 'string') throw typeError(site, v, 'string');
      const parsed = parseRfc3339(v);
      if (!parsed.ok) throw new MetadataDecodeError(parsed.error);
      return parsed.utc;
    }
    case 'stringMap': {
      if (!isJsonObject(v)) throw typeError(site, v, 'map[string]string');
      const out: Record<string, string> = {};
      for (const k of Object.keys(v).sort(compareGoStrings)) {
        const item = v[k];
        if (item !== null && typeof item !== 'string') throw typeError(site, item, 'string');
        setKey(out, k, item ?? '');
      }
      return out;
    }
    case 'stringList':
      if (!Array.isArray(v)) throw typeError(site, v, '[]string');
      return v.map((item) => {
        if (item !== null && typeof item !== 'string') throw typeError(site, item, 'string');
        return item ?? '';
      });
    default:
      return v;
  }
}

function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isJsonObject(v)) return Object.keys(v).length === 0;
  return false;
}

function sortedAsGo(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++)
    if (compareGoStrings(keys[i - 1] as string, keys[i] as string) > 0) return false;
  return true;
}

/** Decodes one Go struct: known fields by kind, unknown ones reported; zero values omitted (omitempty). */
function decodeStruct(kind: StructKind, v: JsonObject, site: Site, unknown: string[]): JsonObject {
  const out: JsonObject = {};
  const keys = Object.keys(v);
  // The API server writes map keys sorted, so objects it sent skip the sort.
  if (!sortedAsGo(keys)) keys.sort(compareGoStrings);
  for (const k of keys) {
    const fieldKind = Object.hasOwn(kind.fields, k) ? kind.fields[k] : undefined;
    if (!fieldKind) {
      unknown.push(`${site.path}.${k}`);
      continue;
    }
    const raw = v[k];
    let value: unknown;
    if (fieldKind === 'string' && typeof raw === 'string') value = raw;
    else {
      const field = site.struct === kind.struct && !site.field ? k : `${site.field}.${k}`;
      value = decodeValue(fieldKind, raw, { struct: kind.struct, field, path: `${site.path}.${k}` }, unknown);
    }
    // OwnerReference's apiVersion, kind, name and uid have no omitempty; a bool pointer keeps false.
    const keepZero = kind === OWNER_REFERENCE && (fieldKind === 'string' || (fieldKind === 'bool' && value === false));
    if (value !== undefined && (keepZero || !isEmpty(value))) out[k] = value;
  }
  if (kind === OWNER_REFERENCE) for (const k of ['apiVersion', 'kind', 'name', 'uid']) out[k] ??= '';
  return out;
}

export interface DecodedMetadata {
  metadata: JsonObject;
  /** Fields metav1.ObjectMeta does not have, as `<prefix>metadata.<field>`. */
  unknownFields: string[];
}

/**
 * GetObjectMetaWithOptions + SetObjectMeta: the metadata as the typed ObjectMeta round trip leaves it.
 * Throws MetadataDecodeError with encoding/json's message when a field has the wrong type.
 */
export function decodeObjectMeta(metadata: unknown, prefix: string): DecodedMetadata {
  if (metadata === null) return { metadata: {}, unknownFields: [] };
  if (!isJsonObject(metadata)) {
    throw new MetadataDecodeError(
      `json: cannot unmarshal ${jsonValueName(metadata)} into Go value of type v1.ObjectMeta`,
    );
  }
  const unknownFields: string[] = [];
  const decoded = decodeStruct(
    OBJECT_META,
    metadata,
    { struct: 'ObjectMeta', field: '', path: `${prefix}metadata` },
    unknownFields,
  );
  return { metadata: decoded, unknownFields };
}
