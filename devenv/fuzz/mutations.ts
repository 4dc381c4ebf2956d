/**
 * Seeded mutations of JSON reviews: values of every type at random paths, prototype names, long
 * and multi-byte strings, deep and wide values, subtrees spliced in from other inputs, and damage to
 * the text itself. Used by the seeded fuzz suite and by the coverage-guided fuzzer.
 */

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

/** mulberry32: small, seedable, good enough to pick mutations. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const PROTO_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype'];
const KEYS = ['a', 'name', 'spec', 'tier', 'x', 'hostname', 'replicas', 'content', 'labels', 'metadata', 'status'];
export const STRINGS = [
  '',
  'prod',
  'dev',
  'BAD_host',
  'shop.web.sites.example.com',
  'staticsite.dev/external-record',
  'staticsite.dev/v1',
  'staticsite.dev/v1alpha1',
  'v1',
  'v1alpha1',
  'StaticSite',
  'CREATE',
  'UPDATE',
  'Strict',
  'Ignore',
  '2026-12-01T10:00:00Z',
  'not-a-time',
  '\u0000',
  '\ud800',
  'ü日本🚀',
  '-1',
  '1e3',
  'a'.repeat(300),
];
const NUMBERS = [0, -1, 1, 2, 10, 11, 1.5, -0, 2 ** 31, 2 ** 53, 2 ** 63, 1e308, -1e-308, Number.MAX_SAFE_INTEGER];

/** Sets a key as an own data property, even `__proto__`. */
function put(o: JsonObject, key: string, value: Json): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** AFL's arithmetic mutation: a small step either way. */
export function nudged(rand: () => number, n: number): number {
  return n + (rand() < 0.5 ? -1 : 1) * (1 + Math.floor(rand() * 35));
}

/**
 * `dictionary`: words the target compares input with (AFL's dictionaries; the coverage fuzzer
 * takes the string literals of the code under test), used as strings and as keys.
 */
export function mutations(rand: () => number, dictionary: readonly string[] = []) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const word = () => (dictionary.length > 0 && rand() < 0.6 ? pick(dictionary) : pick(STRINGS));
  const key = () => (dictionary.length > 0 && rand() < 0.5 ? pick(dictionary) : pick(KEYS));
  const value = (depth = 0): Json => {
    switch (Math.floor(rand() * (depth > 3 ? 6 : 9))) {
      case 0:
        return null;
      case 1:
        return rand() < 0.5;
      case 2:
        return rand() < 0.5 ? pick(NUMBERS) : Math.floor(rand() * 17);
      case 3:
      case 4:
        return word();
      case 5:
        return 'z'.repeat(Math.floor(rand() * 100_000));
      case 6:
        return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
      default: {
        const o: JsonObject = {};
        for (let i = Math.floor(rand() * 4); i > 0; i--) {
          put(o, rand() < 0.2 ? pick(PROTO_KEYS) : key(), value(depth + 1));
        }
        return o;
      }
    }
  };
  /** Sets `v` at a random path of `root` (an existing key, a new key, or an array index). */
  const damage = (root: Json, v: Json, depth = 0): Json => {
    if (root === null || typeof root !== 'object' || rand() < (depth === 0 ? 0.02 : 0.3)) return v;
    if (Array.isArray(root)) {
      if (root.length === 0) return [v];
      const i = Math.floor(rand() * root.length);
      root[i] = damage(root[i] as Json, v, depth + 1);
      return root;
    }
    const keys = Object.keys(root);
    const at = keys.length > 0 && rand() < 0.8 ? pick(keys) : rand() < 0.3 ? pick(PROTO_KEYS) : key();
    put(root, at, damage((Object.hasOwn(root, at) ? root[at] : null) as Json, v, depth + 1));
    return root;
  };
  return { pick, value, damage, word, key };
}

/** Every object and array in `root`, the root first. */
function containers(root: Json, out: Array<JsonObject | Json[]> = [], depth = 0): Array<JsonObject | Json[]> {
  if (root === null || typeof root !== 'object' || depth > 40 || out.length > 2_000) return out;
  out.push(root);
  for (const child of Array.isArray(root) ? root : Object.values(root)) containers(child, out, depth + 1);
  return out;
}

/** A string changed the ways that reach other branches: cut, repeated, cased, escaped, widened. */
function mutateString(rand: () => number, s: string, word: () => string): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  switch (Math.floor(rand() * 9)) {
    case 0:
      return s.slice(0, Math.floor(rand() * (s.length + 1)));
    case 1:
      return s.repeat(2 + Math.floor(rand() * 20));
    case 2:
      return s.toUpperCase();
    case 3:
      return `${s}${pick(['-', '.', '/', '_', ' ', '\n', '"', '\\', '🙂', '\u0085', '\ufeff'])}`;
    case 4:
      return `${pick(['-', '.', '/', 'A', '0', '🙂'])}${s}`;
    case 5:
      return s.replace(/[a-z]/, pick(['-', 'Z', '.', '/', '']));
    case 6:
      return `${s}.${s}`;
    case 7:
      return `${s}${word()}`;
    default:
      return word();
  }
}

/**
 * One structural mutation of a parsed review, in place: a value set, a key deleted, an item
 * duplicated or dropped, a string or number changed, a subtree from `donor` spliced in.
 */
export function mutateJson(rand: () => number, root: Json, donor: Json, dictionary: readonly string[] = []): Json {
  const { pick, value, damage, word, key: newKey } = mutations(rand, dictionary);
  const all = containers(root);
  const target = all.length > 0 ? pick(all) : undefined;
  const roll = rand();
  if (target === undefined || roll < 0.15) return damage(root, value(), 1);
  const keys = Array.isArray(target) ? [...target.keys()].map(String) : Object.keys(target);
  const key = keys.length > 0 ? pick(keys) : undefined;
  const get = (k: string): Json => (Array.isArray(target) ? (target[Number(k)] as Json) : (target[k] as Json));
  const set = (k: string, v: Json) => {
    if (Array.isArray(target)) target[Number(k)] = v;
    else put(target, k, v);
  };
  if (roll < 0.3 && key !== undefined) {
    if (Array.isArray(target)) target.splice(Number(key), 1);
    else delete target[key];
  } else if (roll < 0.45 && key !== undefined) {
    const current = get(key);
    if (typeof current === 'string') set(key, mutateString(rand, current, word));
    else if (typeof current === 'number')
      set(key, rand() < 0.7 ? nudged(rand, current) : pick([-current, current * 2 ** 32, 0.5]));
    else if (typeof current === 'boolean') set(key, !current);
    else set(key, value());
  } else if (roll < 0.6 && Array.isArray(target) && target.length > 0) {
    const item = structuredClone(pick(target));
    for (let n = 1 + Math.floor(rand() * (rand() < 0.1 ? 200 : 3)); n > 0; n--) target.push(structuredClone(item));
  } else if (roll < 0.75) {
    const pieces = containers(donor);
    const piece = pieces.length > 0 ? structuredClone(pick(pieces)) : value();
    if (key !== undefined && rand() < 0.6) set(key, piece as Json);
    else if (Array.isArray(target)) target.push(piece as Json);
    else put(target, rand() < 0.2 ? pick(PROTO_KEYS) : newKey(), piece as Json);
  } else if (roll < 0.85 && key !== undefined) {
    set(key, rand() < 0.5 ? [get(key)] : { [newKey()]: get(key) });
  } else if (key !== undefined) {
    set(key, value());
  }
  return root;
}

/** Damage to the text: a character changed, inserted or dropped, a cut, a slice repeated. */
export function mutateText(rand: () => number, text: string): string {
  const at = Math.floor(rand() * (text.length + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  switch (Math.floor(rand() * 6)) {
    case 0:
      return text.slice(0, at);
    case 1:
      return `${text.slice(0, at)}${pick(['{', '}', '[', ']', ',', ':', '"', '\\', '0', '-', 'e', 'null', '\u0000', '🙂', '\\ud800'])}${text.slice(at)}`;
    case 2:
      return `${text.slice(0, at)}${text.slice(at + 1)}`;
    case 3: {
      const end = Math.min(text.length, at + Math.floor(rand() * 64));
      return `${text.slice(0, end)}${text.slice(at, end)}${text.slice(end)}`;
    }
    case 4:
      return text.replace(
        /:(-?\d+)([,}\]])/,
        `:${pick(['9223372036854775808', '-0', '1e400', '00', '1.0', '0x10', '9007199254740993', '9223372036854775807', '-9223372036854775808', '-9223372036854775809', '"\\udc00"'])}$2`,
      );
    default:
      return text.replace('{', '{"uid":1,"uid":2,');
  }
}
