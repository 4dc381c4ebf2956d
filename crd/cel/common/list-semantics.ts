/**
 * The equality and addition of set and map lists as the API server's CEL values define them
 * (unstructuredSetList, unstructuredMapList): `==` ignores order (a set list by its scalar items, a map
 * list by its map keys: the receiver's last item of each key, and each key of the receiver met), and
 * `+` is a union (set) or a merge that keeps the receiver's positions and takes the other list's items
 * for equal keys (map). The receiver, the left operand, decides: `self == ['b', 'a']` holds for a set
 * list `['a', 'b']`, `['b', 'a'] == self` does not; `x in list` asks `x == item`. Lists of the atomic
 * type, and lists a rule builds, compare in order.
 * Source: k8s.io/apiserver@v0.37.2/pkg/cel/common/valuesunstructured.go, valuesreflect.go
 * (setElementKey, addToSetList, addToMapList).
 */
import { CelFunctionError } from './errors.ts';

const LIST_KIND = Symbol('listKind');

type Keyed = { kind: 'set' } | { kind: 'map'; keys: readonly string[]; raw: readonly unknown[] };
type Tagged = unknown[] & { [LIST_KIND]?: Keyed };

/** Marks a converted list as the API server's set list. */
export function tagSetList(list: unknown[]): unknown[] {
  (list as Tagged)[LIST_KIND] = { kind: 'set' };
  return list;
}

/** Marks a converted list as a map list with these keys, keeping the JSON items the keys are read from. */
export function tagMapList(list: unknown[], keys: readonly string[], raw: readonly unknown[]): unknown[] {
  (list as Tagged)[LIST_KIND] = { kind: 'map', keys, raw };
  return list;
}

function keyedOf(value: unknown): Keyed | undefined {
  return Array.isArray(value) ? (value as Tagged)[LIST_KIND] : undefined;
}

/** A Go map key of a scalar: its type and value (1 and '1' differ). */
function scalarKey(value: unknown): string {
  return `${typeof value}:${String(value)}`;
}

/** setElementKey: a set's items are scalars; anything else is cel-go's error. */
function setElementKey(value: unknown): string {
  if (Array.isArray(value) || value instanceof Map) {
    throw new CelFunctionError('listSet operations are only supported on lists of scalar values');
  }
  return scalarKey(value);
}

/** toMapKey: the item's key fields from its JSON (an absent one is nil); not an object: no key matches it. */
function mapKey(raw: unknown, keys: readonly string[]): string | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  return keys.map((k) => (Object.hasOwn(raw, k) ? scalarKey((raw as Record<string, unknown>)[k]) : 'nil')).join('\0');
}

/** The JSON an item of a list came from, where the value kept it (an object); else the value itself. */
export type RawOf = (value: unknown) => unknown;

function setEquals(receiver: unknown[], other: unknown[]): boolean {
  if (receiver.length !== other.length) return false;
  const set = new Set(receiver.map(setElementKey));
  const seen = new Set<string>();
  for (const item of other) {
    const key = setElementKey(item);
    if (!set.has(key)) return false;
    seen.add(key);
  }
  return seen.size === set.size;
}

/** How two items compare, and where an item's JSON is. */
interface Items {
  equals: (a: unknown, b: unknown) => boolean;
  rawOf: RawOf;
}

function mapListEquals(
  receiver: unknown[],
  keyed: Extract<Keyed, { kind: 'map' }>,
  other: unknown[],
  items: Items,
): boolean {
  const { equals, rawOf } = items;
  if (receiver.length !== other.length) return false;
  const byKey = new Map<string | undefined, number>();
  keyed.raw.forEach((raw, i) => {
    byKey.set(mapKey(raw, keyed.keys), i);
  });
  const seen = new Set<string | undefined>();
  for (const item of other) {
    const key = mapKey(rawOf(item), keyed.keys);
    const at = key === undefined ? undefined : byKey.get(key);
    if (at === undefined) return false;
    if (!equals(receiver[at], item)) return false;
    seen.add(key);
  }
  return seen.size === byKey.size;
}

/**
 * `receiver == other` when the receiver is a set or map list of the API server's values; undefined when
 * it is not (the caller compares in order). `equals` compares two items.
 */
export function keyedListEquals(
  receiver: unknown,
  other: unknown,
  equals: (a: unknown, b: unknown) => boolean,
  rawOf: RawOf,
): boolean | undefined {
  const keyed = keyedOf(receiver);
  if (!keyed || !Array.isArray(other)) return undefined;
  const list = receiver as unknown[];
  return keyed.kind === 'set' ? setEquals(list, other) : mapListEquals(list, keyed, other, { equals, rawOf });
}

/** `receiver + other` of a set (union) or map list (merge by key); undefined when the receiver is neither. */
export function keyedListAdd(receiver: unknown, other: unknown, rawOf: RawOf): unknown[] | undefined {
  const keyed = keyedOf(receiver);
  if (!keyed || !Array.isArray(other)) return undefined;
  const items = [...(receiver as unknown[])];
  if (keyed.kind === 'set') {
    const set = new Set(items.map(setElementKey));
    for (const item of other) {
      const key = setElementKey(item);
      if (set.has(key)) continue;
      set.add(key);
      items.push(item);
    }
    return items;
  }
  const at = new Map<string | undefined, number>();
  items.forEach((item, i) => {
    at.set(mapKey(keyed.raw[i] ?? rawOf(item), keyed.keys), i);
  });
  for (const item of other) {
    const position = at.get(mapKey(rawOf(item), keyed.keys));
    if (position === undefined) items.push(item);
    else items[position] = item;
  }
  return items;
}
