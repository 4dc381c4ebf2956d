/**
 * What an object value (a schema node with properties) keeps of the JSON it was converted from, so that `==`
 * compares two objects as the API server does (unstructuredMap.Equal): objects of different numbers of JSON
 * fields are unequal (unknown fields a node preserves and null fields count); declared fields compare as CEL
 * values, a null one being absent; an unknown field compares as JSON when the other object has it too.
 * Source: k8s.io/apiserver@v0.37.2/pkg/cel/common/valuesunstructured.go (unstructuredMap.Equal, Size, Find).
 */

/** What the comparison reads of a declared field (decl-types.ts ObjectField): the name CEL code uses. */
interface ObjectField {
  readonly celName: string;
}

const UNSTRUCTURED = Symbol('unstructured');

interface Unstructured {
  raw: Record<string, unknown>;
  fields: ReadonlyMap<string, ObjectField>;
}

type WithUnstructured = Map<string, unknown> & { [UNSTRUCTURED]?: Unstructured };

/** Records on a converted object the JSON object it came from and its type's fields (by JSON name). */
export function keepUnstructured(
  object: Map<string, unknown>,
  raw: Record<string, unknown>,
  fields: ReadonlyMap<string, ObjectField>,
): void {
  (object as WithUnstructured)[UNSTRUCTURED] = { raw, fields };
}

/** equality.Semantic.DeepEqual on decoded JSON: numbers by value, arrays in order, objects by their keys. */
function jsonEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
    // biome-ignore lint/suspicious/noDoubleEquals: a JSON integer may be a number or a bigint
    return a == b;
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEquals(x, b[i]));
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every(
    (k) => Object.hasOwn(b, k) && jsonEquals((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

/**
 * unstructuredMap.Equal of two objects that both kept their JSON; undefined when either did not (an object
 * a rule built, or a default), for the caller's own comparison. `equals` compares two CEL values.
 */
export function unstructuredEquals(
  a: Map<string, unknown>,
  b: Map<string, unknown>,
  equals: (x: unknown, y: unknown) => boolean,
): boolean | undefined {
  const ua = (a as WithUnstructured)[UNSTRUCTURED];
  const ub = (b as WithUnstructured)[UNSTRUCTURED];
  if (ua === undefined || ub === undefined) return undefined;
  const keys = Object.keys(ua.raw);
  if (keys.length !== Object.keys(ub.raw).length) return false;
  for (const key of keys) {
    const field = ua.fields.get(key);
    if (field === undefined) {
      if (Object.hasOwn(ub.raw, key) && !jsonEquals(ua.raw[key], ub.raw[key])) return false;
      continue;
    }
    const found = a.has(field.celName);
    if (found !== b.has(field.celName)) return false;
    if (found && !equals(a.get(field.celName), b.get(field.celName))) return false;
  }
  return true;
}

/** The JSON an object value was converted from, where it kept it; otherwise the value itself. */
export function rawJsonOf(value: unknown): unknown {
  return value instanceof Map ? ((value as WithUnstructured)[UNSTRUCTURED]?.raw ?? value) : value;
}
