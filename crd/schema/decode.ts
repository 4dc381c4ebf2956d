/**
 * The decoding half of admission (customresource_handler.go schemaCoercingDecoder and
 * unstructuredDefaulter): metadata through the typed ObjectMeta, unknown fields pruned, non-nullable
 * nulls dropped, embedded resources coerced, then defaults.
 */

import { append } from '../apimachinery/append.ts';
import { deepCopyJson, type JsonObject } from '../json-value.ts';
import type { CompiledSchema } from './compile.ts';
import { applyDefaults } from './defaulting.ts';
import { coerceEmbeddedResources } from './embedded.ts';
import { decodeObjectMeta, MetadataDecodeError } from './objectmeta-decode.ts';
import { pruneUnknownFields } from './prune.ts';

export interface Decoded {
  object: JsonObject;
  /** Unknown field paths in the decoder's order: metadata, pruned fields, embedded metadata. */
  unknownFields: string[];
}

/** Decoding failed: the message the API server puts after "cannot be handled as a <Kind>: ". */
export class DecodeFailure extends Error {
  override name = 'DecodeFailure';
}

/**
 * Decodes a copy of `input` (the input is never changed). With `ofThisKind` false (another kind in
 * the body) nothing is pruned or defaulted, as the API server's coercer skips foreign kinds.
 */
export function decode(compiled: CompiledSchema, input: JsonObject, ofThisKind: boolean): Decoded {
  const unknownFields: string[] = [];
  let metadata: JsonObject | undefined;
  if (Object.hasOwn(input, 'metadata')) {
    try {
      const decoded = decodeObjectMeta(input.metadata, '');
      metadata = decoded.metadata;
      append(unknownFields, decoded.unknownFields);
    } catch (error) {
      if (error instanceof MetadataDecodeError) throw new DecodeFailure(error.message);
      throw error;
    }
  }
  let object: JsonObject;
  if (ofThisKind) {
    const pruned = pruneUnknownFields(input, compiled.root, { isResourceRoot: true, dropNulls: true });
    object = pruned.value as JsonObject;
    append(unknownFields, pruned.unknown);
    if (compiled.hasEmbeddedResources) {
      const coerced = coerceEmbeddedResources(object, compiled.root);
      if (coerced.error) throw new DecodeFailure(coerced.error.toString());
      append(unknownFields, coerced.unknownFields);
    }
  } else {
    object = deepCopyJson(input);
  }
  if (metadata) object.metadata = metadata;
  if (ofThisKind) applyDefaults(object, compiled.root);
  return { object, unknownFields };
}
