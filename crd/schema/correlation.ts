/**
 * Correlates a new value with its old value during an update (k8s.io/apiserver pkg/cel/common
 * equality.go, CorrelatedObject), so validation ratcheting can tell which subtrees did not change.
 */

import { stringifyJson } from '../json-int64.ts';
import { isJsonObject, jsonEqual } from '../json-value.ts';
import type { SchemaNode } from './node.ts';

function mapListKey(item: unknown, keys: readonly string[]): string | undefined {
  if (!isJsonObject(item)) return undefined;
  return stringifyJson(keys.map((k) => (Object.hasOwn(item, k) ? item[k] : undefined)));
}

export class Correlation {
  readonly value: unknown;
  readonly oldValue: unknown;
  readonly schema: SchemaNode | undefined;
  private readonly children = new Map<string | number, Correlation | undefined>();
  private oldByKey: Map<string, unknown> | undefined;
  private equal: boolean | undefined;

  constructor(value: unknown, oldValue: unknown, schema: SchemaNode | undefined) {
    this.value = value;
    this.oldValue = oldValue;
    this.schema = schema;
  }

  key(field: string): Correlation | undefined {
    if (this.children.has(field)) return this.children.get(field);
    let child: Correlation | undefined;
    const s = this.schema;
    if (s && isJsonObject(this.value) && isJsonObject(this.oldValue)) {
      if (Object.hasOwn(this.value, field) && Object.hasOwn(this.oldValue, field)) {
        const propertySchema = s.properties?.get(field) ?? s.additionalProperties;
        if (propertySchema) child = new Correlation(this.value[field], this.oldValue[field], propertySchema);
      }
    }
    this.children.set(field, child);
    return child;
  }

  /** Only list-type map items correlate, by their key fields. */
  index(i: number): Correlation | undefined {
    if (this.children.has(i)) return this.children.get(i);
    let child: Correlation | undefined;
    const s = this.schema;
    if (
      s?.items &&
      s.listType === 'map' &&
      Array.isArray(this.value) &&
      Array.isArray(this.oldValue) &&
      i < this.value.length
    ) {
      if (!this.oldByKey) {
        this.oldByKey = new Map();
        for (const old of this.oldValue) {
          const k = mapListKey(old, s.listMapKeys);
          if (k !== undefined && !this.oldByKey.has(k)) this.oldByKey.set(k, old);
        }
      }
      const k = mapListKey(this.value[i], s.listMapKeys);
      const old = k === undefined ? undefined : this.oldByKey.get(k);
      if (old !== undefined) child = new Correlation(this.value[i], old, s.items);
    }
    this.children.set(i, child);
    return child;
  }

  /** CachedDeepEqual. */
  deepEqual(): boolean {
    if (this.equal !== undefined) return this.equal;
    this.equal = this.computeEqual();
    return this.equal;
  }

  private computeEqual(): boolean {
    const { value, oldValue } = this;
    if (value === null && oldValue === null) return true;
    if (value === null || oldValue === null || value === undefined || oldValue === undefined) return false;
    if (Array.isArray(value) || Array.isArray(oldValue)) {
      if (!Array.isArray(value) || !Array.isArray(oldValue) || value.length !== oldValue.length) return false;
      if (this.schema?.listType !== 'map') return jsonEqual(value, oldValue);
      for (let i = 0; i < value.length; i++) {
        const child = this.index(i);
        if (!child?.deepEqual()) return false;
      }
      return true;
    }
    if (isJsonObject(value) || isJsonObject(oldValue)) {
      if (!isJsonObject(value) || !isJsonObject(oldValue)) return false;
      const keys = Object.keys(value);
      if (keys.length !== Object.keys(oldValue).length) return false;
      for (const k of keys) {
        const child = this.key(k);
        if (!child?.deepEqual()) return false;
      }
      return true;
    }
    return jsonEqual(value, oldValue);
  }
}
