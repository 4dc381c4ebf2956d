import { compareGoStrings } from '../apimachinery/go-format.ts';
import { deepCopyJson, setKey } from '../json-value.ts';
import type { SchemaNode } from './node.ts';

/** apiVersion, kind and metadata survive pruning where an object is a resource (pruning/algorithm.go:51). */
export const META_FIELDS: ReadonlySet<string> = new Set(['apiVersion', 'kind', 'metadata']);

function joinKey(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** Drops a null the schema neither allows nor defaults (defaulting/prunenulls.go). */
function dropsNull(s: SchemaNode | undefined): boolean {
  return s !== undefined && !s.nullable && !s.hasDefault;
}

interface PruneRun {
  dropNulls: boolean;
  unknown: string[];
}

/** An object or list the walk copies: its schema, its path, and what the nodes above decided. */
interface PruneAt {
  s: SchemaNode | undefined;
  path: string;
  /** The resource root: apiVersion, kind and metadata are kept, metadata as it is. */
  root: boolean;
  /** skipPrune: below x-kubernetes-preserve-unknown-fields, keys without a schema are kept as they are. */
  preserve: boolean;
}

const isContainer = (x: unknown): x is object => x !== null && typeof x === 'object';

function copyPruned(run: PruneRun, x: object, at: PruneAt): unknown {
  const s = at.s;
  const keep = at.preserve || s?.preserveUnknownFields === true;
  if (Array.isArray(x)) {
    const items = s?.items;
    const out = new Array(x.length);
    for (let i = 0; i < x.length; i++) {
      const v = x[i];
      out[i] = isContainer(v)
        ? copyPruned(run, v, { s: items, path: `${at.path}[${i}]`, root: false, preserve: keep })
        : v;
    }
    return out;
  }
  const obj = x as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const embedded = at.root || s?.embeddedResource === true;
  for (const k in obj) {
    const v = obj[k];
    const child = s?.properties?.get(k) ?? s?.additionalProperties;
    if (embedded && s !== undefined && META_FIELDS.has(k)) {
      // Kept unpruned; the root's metadata is replaced by its decoded copy anyway.
      if (!(v === null && run.dropNulls && dropsNull(child)))
        setKey(out, k, at.root && k === 'metadata' ? v : deepCopyJson(v));
      continue;
    }
    if (!child && !keep) {
      // pruning/algorithm.go:90: a stray apiVersion/kind/metadata at the very top goes unreported
      if (!(META_FIELDS.has(k) && at.path === '' && s !== undefined)) run.unknown.push(joinKey(at.path, k));
      continue;
    }
    if (v === null) {
      if (!(run.dropNulls && dropsNull(child))) setKey(out, k, null);
      continue;
    }
    const copy = isContainer(v)
      ? copyPruned(run, v, { s: child, path: joinKey(at.path, k), root: false, preserve: keep && !child })
      : v;
    setKey(out, k, copy);
  }
  return out;
}

export interface PruneOptions {
  /** Treat the value as a resource: apiVersion, kind and metadata are kept (PruneWithOptions' isResourceRoot). */
  isResourceRoot?: boolean;
  /** Also drop nulls the schema neither allows nor defaults (PruneNonNullableNullsWithoutDefaults). */
  dropNulls?: boolean;
}

/**
 * A copy of `value` without the fields the schema does not declare (pruning.PruneWithOptions), and
 * their paths sorted as Go sorts strings: `spec.colour`, `spec.items[0].x`. The input is untouched.
 */
export function pruneUnknownFields(
  value: unknown,
  schema: SchemaNode | undefined,
  options: PruneOptions = {},
): { value: unknown; unknown: string[] } {
  const run: PruneRun = { dropNulls: options.dropNulls === true, unknown: [] };
  const pruned = isContainer(value)
    ? copyPruned(run, value, { s: schema, path: '', root: options.isResourceRoot === true, preserve: false })
    : value;
  return { value: pruned, unknown: run.unknown.length > 1 ? run.unknown.sort(compareGoStrings) : run.unknown };
}
