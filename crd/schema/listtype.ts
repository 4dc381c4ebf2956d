/**
 * The uniqueness invariants of `x-kubernetes-list-type: set` and `map` lists
 * (apiextensions-apiserver pkg/apiserver/schema/listtype/validation.go).
 */

import { append } from '../apimachinery/append.ts';
import { type FieldError, fieldErrors } from '../apimachinery/field-error.ts';
import { goJsonMarshal, isGoInt } from '../apimachinery/go-format.ts';
import { isJsonObject, type JsonObject, setKey } from '../json-value.ts';
import type { SchemaNode } from './node.ts';

const UNSPECIFIED_KEY = Symbol('unspecifiedKeyValue');

/** The identity Go's map[interface{}]int gives a scalar, or the JSON of a compound value. */
function identity(x: unknown): string {
  if (x === UNSPECIFIED_KEY) return 'unspecified';
  if (x === null || x === undefined) return 'nil';
  if (typeof x === 'object') return `json:${goJsonMarshal(x)}`;
  if (typeof x === 'number') return `${isGoInt(x) ? 'int64' : 'float64'}:${x}`;
  if (typeof x === 'bigint') return `int64:${x}`;
  return `${typeof x}:${String(x)}`;
}

/** validateListSet: the index of the second appearance of each repeated value. */
function nonUniqueIndices(values: readonly unknown[]): number[] {
  if (values.length <= 1) return [];
  const seen = new Map<string, number>();
  const out: number[] = [];
  values.forEach((x, i) => {
    const id = identity(x);
    const times = seen.get(id);
    if (times === undefined) seen.set(id, 1);
    else {
      seen.set(id, times + 1);
      if (times === 1) out.push(i);
    }
  });
  return out;
}

function validateListMap(path: string, s: SchemaNode, list: readonly unknown[]): FieldError[] {
  for (let i = 0; i < list.length; i++) {
    const x = list[i];
    if (x !== null && !isJsonObject(x)) {
      return [fieldErrors.invalid(`${path}[${i}]`, x, 'must be an object for an array of list-type map')];
    }
  }
  if (list.length <= 1) return [];
  const keyFields = s.listMapKeys;
  if (keyFields.length === 1) {
    const keyField = keyFields[0] ?? '';
    const keys = list.map((x) => (isJsonObject(x) && Object.hasOwn(x, keyField) ? x[keyField] : UNSPECIFIED_KEY));
    return nonUniqueIndices(keys).map((i) => {
      const key = keys[i];
      return fieldErrors.duplicate(`${path}[${i}]`, key === UNSPECIFIED_KEY ? {} : { [keyField]: key });
    });
  }
  const keys = list.map((x) => {
    const key: JsonObject = {};
    if (isJsonObject(x)) for (const k of keyFields) if (Object.hasOwn(x, k)) setKey(key, k, x[k]);
    return key;
  });
  return nonUniqueIndices(keys).map((i) => fieldErrors.duplicate(`${path}[${i}]`, keys[i]));
}

function validateArray(path: string, s: SchemaNode, list: readonly unknown[], errs: FieldError[]): void {
  if (s.listType === 'set') {
    for (const i of nonUniqueIndices(list)) errs.push(fieldErrors.duplicate(`${path}[${i}]`, list[i]));
  } else if (s.listType === 'map') {
    append(errs, validateListMap(path, s, list));
  }
  const items = s.items;
  if (items?.containsListType)
    for (let i = 0; i < list.length; i++) validateValue(`${path}[${i}]`, items, list[i], errs);
}

function validateValue(path: string, s: SchemaNode, value: unknown, errs: FieldError[]): void {
  if (Array.isArray(value)) validateArray(path, s, value, errs);
  else if (isJsonObject(value)) validateObject(path, s, value, errs);
}

function validateObject(path: string, s: SchemaNode, obj: JsonObject, errs: FieldError[]): void {
  const additional = s.additionalProperties;
  if (additional?.containsListType) {
    for (const k in obj) validateValue(`${path}[${k}]`, additional, obj[k], errs);
  }
  if (s.properties) {
    for (const k in obj) {
      const sub = s.properties.get(k);
      if (sub?.containsListType) validateValue(path === '' ? k : `${path}.${k}`, sub, obj[k], errs);
    }
  }
}

/** ValidateListSetsAndMaps over a whole object. */
export function validateListSetsAndMaps(root: SchemaNode, obj: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  validateObject('', root, obj, errs);
  return errs;
}
