/**
 * What the API server does to an object between decoding and validation: the request namespace
 * (registry/rest/create.go) and PrepareForCreate / PrepareForUpdate (customresource/strategy.go).
 */

import { isJsonObject, type JsonObject, jsonEqual, setKey } from '../json-value.ts';
import type { CompiledSchema } from './compile.ts';

export function metadataOf(object: JsonObject): JsonObject {
  const meta = object.metadata;
  return isJsonObject(meta) ? meta : {};
}

/**
 * EnsureObjectNamespaceMatchesRequestNamespace (registry/rest/create.go): a cluster-scoped object
 * loses any namespace; a namespaced one gets the request's, and must not name another.
 */
export function placeInNamespace(object: JsonObject, namespaced: boolean, namespace: string | undefined): boolean {
  const meta = metadataOf(object);
  if (!namespaced) {
    if (Object.hasOwn(meta, 'namespace')) {
      const { namespace: _, ...rest } = meta;
      object.metadata = rest;
    }
    return true;
  }
  if (namespace === undefined) return true;
  const ns = typeof meta.namespace === 'string' ? meta.namespace : '';
  if (ns === '') {
    meta.namespace = namespace;
    object.metadata = meta;
  }
  return ns === '' || ns === namespace;
}

/**
 * What the API server clears of the metadata a client sent. A create loses the system fields
 * (rest.WipeObjectMetaSystemFields, registry/rest/meta.go:30, called by handlers/create.go:171 before
 * admission; the server then stamps a uid and creationTimestamp of its own). Nothing stores a
 * selfLink: storage clears it before the write (APIObjectVersioner.PrepareObjectForStorage,
 * storage/api_object_versioner.go:63), so an update's answer has none either. Only a dry-run update
 * echoes it (DryRunnableStorage.GuaranteedUpdate returns the object unprepared).
 */
export function clearSystemFields(object: JsonObject, create: boolean): void {
  const meta = metadataOf(object);
  const fields = create ? WIPED_ON_CREATE : ['selfLink'];
  if (!fields.some((f) => Object.hasOwn(meta, f))) return;
  const kept: JsonObject = {};
  for (const [k, v] of Object.entries(meta)) if (!fields.includes(k)) setKey(kept, k, v);
  object.metadata = kept;
}

const WIPED_ON_CREATE = ['creationTimestamp', 'uid', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink'];

/**
 * PrepareForCreate / PrepareForUpdate (strategy.go:145, :159): generation 1 on create, +1 on update
 * when more than metadata changed; with the status subresource, create drops status and update keeps
 * the old one.
 */
/** names.SimpleNameGenerator (apiserver storage/names/generate.go): the base cut to 58 bytes plus 5 random characters. */
export function simpleNameGenerator(random: () => number = Math.random): (base: string) => string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return (base) => {
    let suffix = '';
    for (let i = 0; i < 5; i++) suffix += alphabet[Math.floor(random() * alphabet.length)];
    return `${base.length > 58 ? base.slice(0, 58) : base}${suffix}`;
  };
}

/** On create, a missing name is generated from generateName (rest.BeforeCreate), when a generator is given. */
export function generateName(object: JsonObject, generator: ((base: string) => string) | undefined): void {
  const meta = metadataOf(object);
  if (!generator || (typeof meta.name === 'string' && meta.name !== '')) return;
  if (typeof meta.generateName !== 'string' || meta.generateName === '') return;
  meta.name = generator(meta.generateName);
  object.metadata = meta;
}

export function prepare(compiled: CompiledSchema, object: JsonObject, oldObject: JsonObject | undefined): void {
  if (compiled.statusSubresource) {
    if (oldObject === undefined || !Object.hasOwn(oldObject, 'status')) delete object.status;
    else object.status = oldObject.status;
  }
  const meta = metadataOf(object);
  object.metadata = meta;
  if (!oldObject) {
    meta.generation = 1;
    return;
  }
  const oldMeta = metadataOf(oldObject);
  const oldGeneration = oldMeta.generation;
  const { metadata: _new, ...newContent } = object;
  const { metadata: _old, ...oldContent } = oldObject;
  const base = typeof oldGeneration === 'number' ? oldGeneration : 0;
  meta.generation = jsonEqual(newContent, oldContent) ? base : base + 1;
  keepFromOld(meta, oldMeta);
}

/** What rest.BeforeUpdate carries over from the stored object after PrepareForUpdate (rest/update.go). */
function keepFromOld(meta: JsonObject, oldMeta: JsonObject): void {
  if (isEmptyString(meta.uid) && typeof oldMeta.uid === 'string') meta.uid = oldMeta.uid;
  if (!isEmptyString(oldMeta.creationTimestamp)) meta.creationTimestamp = oldMeta.creationTimestamp;
  if (!isEmptyString(oldMeta.deletionTimestamp)) meta.deletionTimestamp = oldMeta.deletionTimestamp;
  const grace = oldMeta.deletionGracePeriodSeconds;
  if (grace !== undefined && grace !== null && (meta.deletionGracePeriodSeconds ?? null) === null) {
    meta.deletionGracePeriodSeconds = grace;
  }
}

function isEmptyString(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}
