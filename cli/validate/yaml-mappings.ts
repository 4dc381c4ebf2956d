import { defineMappingTag, mapTag } from 'js-yaml';

/**
 * YAML mappings as js-yaml's `{}`-based map tag builds them, and, while `recordPairs` runs, every
 * pair in the order written, repeated keys too. kubectl keeps the last of a repeated key (go-yaml
 * v2 decodes without complaint); the API server, had it received the same keys in JSON, would name
 * each as a strict decoding error. duplicateFieldsOf gives those names, so that a YAML document's
 * repeated keys follow `--field-validation` as a JSON document's do (json-document.ts).
 */

type Pair = { key: string; value: unknown; merged: boolean };

let recording: WeakMap<object, Pair[]> | undefined;
/** js-yaml asks `has` right before it adds a key merged from `<<`: such a pair is no repetition. */
let askedHas: { container: object; key: string } | undefined;

export const recordingMapTag = defineMappingTag('tag:yaml.org,2002:map', {
  create: () => ({}),
  identify: () => false,
  addPair: (container: Record<string, unknown>, key: unknown, value: unknown) => {
    const error = mapTag.addPair(container, key, value);
    if (recording && error === '') {
      const name = String(key);
      const merged = askedHas?.container === container && askedHas.key === name;
      const pairs = recording.get(container) ?? [];
      pairs.push({ key: name, value, merged });
      recording.set(container, pairs);
    }
    askedHas = undefined;
    return error;
  },
  has: (container: Record<string, unknown>, key: unknown) => {
    if (recording) askedHas = { container, key: String(key) };
    return mapTag.has(container, key);
  },
  keys: (container: Record<string, unknown>) => mapTag.keys(container),
  get: (container: Record<string, unknown>, key: unknown) => mapTag.get(container, key),
});

/** Runs `load` (js-yaml with `json: true`: a repeated key overrides) recording every mapping's pairs. */
export function recordPairs<T>(load: () => T): { result: T; pairs: WeakMap<object, Pair[]> } {
  const pairs = new WeakMap<object, Pair[]>();
  recording = pairs;
  try {
    return { result: load(), pairs };
  } finally {
    recording = undefined;
    askedHas = undefined;
  }
}

/** sigs.k8s.io/json keeps at most this many strict errors. */
const MAX_STRICT_ERRORS = 100;

/**
 * The paths of repeated keys in a loaded value, as sigs.k8s.io/json names them for the same object
 * in JSON (keys joined by dots, `[i]` for items): in the order written, each once, at most 100; the
 * values a later key replaced are walked too, as the decoder decodes them before replacing them.
 */
export function duplicateFieldsOf(value: unknown, pairs: WeakMap<object, Pair[]>): string[] {
  const found: string[] = [];
  const seenPaths = new Set<string>();
  const visited = new Set<object>();
  const walk = (node: unknown, path: string): void => {
    if (node === null || typeof node !== 'object' || visited.has(node) || found.length >= MAX_STRICT_ERRORS) return;
    visited.add(node);
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) walk(item, `${path}[${i}]`);
      return;
    }
    const written = pairs.get(node) ?? Object.entries(node).map(([key, v]) => ({ key, value: v, merged: false }));
    const keys = new Set<string>();
    for (const { key, value: v, merged } of written) {
      const keyPath = path === '' ? key : `${path}.${key}`;
      if (keys.has(key) && !merged && !seenPaths.has(keyPath) && found.length < MAX_STRICT_ERRORS) {
        seenPaths.add(keyPath);
        found.push(keyPath);
      }
      // A key written after one merged from `<<` overrides it; a merged key never repeats one.
      if (!merged) keys.add(key);
      walk(v, keyPath);
    }
  };
  walk(value, '');
  return found;
}
