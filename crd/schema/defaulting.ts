import { deepCopyJson, isJsonObject, setKey } from '../json-value.ts';
import type { SchemaNode } from './node.ts';

function isNonNullableNull(x: unknown, s: SchemaNode | undefined): boolean {
  return x === null && s !== undefined && !s.nullable;
}

/**
 * Applies defaults in place the way defaulting.Default does: only inside objects that exist, a
 * missing key or a non-nullable null gets the default, then recursion into every key (including the
 * ones just defaulted, so a defaulted `{}` receives its own nested defaults).
 */
export function applyDefaults(x: unknown, s: SchemaNode | undefined): void {
  if (!s) return;
  if (Array.isArray(x)) {
    const items = s.items;
    for (let i = 0; i < x.length; i++) {
      if (isNonNullableNull(x[i], items) && items?.hasDefault) x[i] = deepCopyJson(items.default);
      applyDefaults(x[i], items);
    }
    return;
  }
  if (!isJsonObject(x)) return;
  for (const [k, prop] of s.defaultedProperties) {
    if (!Object.hasOwn(x, k) || isNonNullableNull(x[k], prop)) setKey(x, k, deepCopyJson(prop.default));
  }
  for (const k in x) {
    const prop = s.properties?.get(k);
    if (prop) {
      const v = x[k];
      if (v !== null && typeof v === 'object') applyDefaults(v, prop);
    } else if (s.additionalProperties) {
      const additional = s.additionalProperties;
      if (isNonNullableNull(x[k], additional) && additional.hasDefault) setKey(x, k, deepCopyJson(additional.default));
      applyDefaults(x[k], additional);
    }
  }
}
