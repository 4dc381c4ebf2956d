/** A decoded JSON object, as the API server's unstructured map[string]interface{}. */
export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** runtime.DeepCopyJSONValue. */
export function deepCopyJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(deepCopyJson) as T;
  const out: JsonObject = {};
  const source = value as JsonObject;
  for (const k in source) out[k] = deepCopyJson(source[k]);
  return out as T;
}

/** reflect.DeepEqual on decoded JSON values (numbers compare by value, as int64/float64 do within one kind). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  const ka = Object.keys(a as JsonObject);
  const kb = b as JsonObject;
  if (ka.length !== Object.keys(kb).length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(kb, k) || !jsonEqual((a as JsonObject)[k], kb[k])) return false;
  }
  return true;
}
