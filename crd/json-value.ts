/** A decoded JSON object, as the API server's unstructured map[string]interface{}. */
export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Sets an own property, also for the key `__proto__`, which JSON.parse makes an ordinary key but
 * plain assignment would take as the object's prototype.
 */
export function setKey(object: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

/** The value of an own property, never one inherited from Object.prototype (`constructor`, `toString`). */
export function ownValue(object: object, key: string): unknown {
  return Object.hasOwn(object, key) ? (object as JsonObject)[key] : undefined;
}

/** runtime.DeepCopyJSONValue. */
export function deepCopyJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(deepCopyJson) as T;
  const out: JsonObject = {};
  const source = value as JsonObject;
  for (const k of Object.keys(source)) setKey(out, k, deepCopyJson(source[k]));
  return out as T;
}

/**
 * reflect.DeepEqual on decoded JSON values (numbers compare by value, as int64/float64 do within one
 * kind). A key whose value is undefined counts as absent, as it does once the value is serialized.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  const left = a as JsonObject;
  const right = b as JsonObject;
  let leftKeys = 0;
  for (const k in left) {
    if (left[k] === undefined) continue;
    leftKeys++;
    if (!Object.hasOwn(right, k) || !jsonEqual(left[k], right[k])) return false;
  }
  let rightKeys = 0;
  for (const k in right) if (right[k] !== undefined) rightKeys++;
  return leftKeys === rightKeys;
}
