/**
 * Whether a value is unchanged from its old value, as validation ratcheting decides it
 * (CorrelatedObject.CachedDeepEqual): a field the node's schema does not declare (a preserved unknown field,
 * the fields of an embedded resource) cannot be correlated, so an object holding one never counts as
 * unchanged; items of a map-type list correlate by their keys, other lists compare as a whole.
 * Source: k8s.io/apiserver@v0.37.2/pkg/cel/common/equality.go.
 */
import type { JSONSchemaProps } from '../apiextensions.ts';
import { stringifyJson } from '../json-int64.ts';
import { isJsonObject, jsonEqual, ownValue } from '../json-value.ts';

function mapListKey(item: unknown, keys: readonly string[]): string | undefined {
  if (!isJsonObject(item)) return undefined;
  return stringifyJson(keys.map((k) => (Object.hasOwn(item, k) ? item[k] : undefined)));
}

function listsUnchanged(value: unknown[], old: unknown[], schema: JSONSchemaProps | undefined): boolean {
  if (value.length !== old.length) return false;
  const items = schema?.items;
  if (!items || Array.isArray(items) || schema?.['x-kubernetes-list-type'] !== 'map') return jsonEqual(value, old);
  const keys = schema['x-kubernetes-list-map-keys'] ?? [];
  const oldByKey = new Map<string, unknown>();
  for (const o of old) {
    const k = mapListKey(o, keys);
    if (k !== undefined && !oldByKey.has(k)) oldByKey.set(k, o);
  }
  return value.every((item) => {
    const k = mapListKey(item, keys);
    return k !== undefined && oldByKey.has(k) && unchanged(item, oldByKey.get(k), items);
  });
}

/** CachedDeepEqual of `value` and `old` under `schema` (absent and null alike are Go's nil). */
export function unchanged(value: unknown, old: unknown, schema: JSONSchemaProps | undefined): boolean {
  if (value == null && old == null) return true;
  if (value == null || old == null) return false;
  if (Array.isArray(value) || Array.isArray(old)) {
    return Array.isArray(value) && Array.isArray(old) && listsUnchanged(value, old, schema);
  }
  if (isJsonObject(value) || isJsonObject(old)) {
    if (!isJsonObject(value) || !isJsonObject(old)) return false;
    const keys = Object.keys(value);
    if (keys.length !== Object.keys(old).length) return false;
    const additional = typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined;
    return keys.every((k) => {
      const property = schema?.properties ? (ownValue(schema.properties, k) as JSONSchemaProps | undefined) : undefined;
      const child = property ?? additional;
      return child !== undefined && Object.hasOwn(old, k) && unchanged(value[k], old[k], child);
    });
  }
  return jsonEqual(value, old);
}
