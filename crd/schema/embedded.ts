/**
 * Resources embedded in a custom resource (`x-kubernetes-embedded-resource`): their ObjectMeta is
 * coerced while decoding (objectmeta/coerce.go, non-root) and validated with the object
 * (objectmeta/validation.go).
 */

import { append } from '../apimachinery/append.ts';
import { type FieldError, fieldErrors } from '../apimachinery/field-error.ts';
import { compareGoStrings } from '../apimachinery/go-format.ts';
import { isJsonObject, type JsonObject } from '../json-value.ts';
import type { SchemaNode } from './node.ts';
import { decodeObjectMeta, MetadataDecodeError } from './objectmeta-decode.ts';
import { validateEmbeddedResource } from './objectmeta-validate.ts';

function childPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

class CoerceFailure extends Error {
  readonly fieldError: FieldError;
  constructor(fieldError: FieldError) {
    super(fieldError.toString());
    this.fieldError = fieldError;
  }
}

/**
 * Calls `visit` on every object of `x` that the schema describes, parents before their children (which are
 * read after the visit, so a visit may replace them).
 */
function visitObjects(
  path: string,
  x: unknown,
  s: SchemaNode | undefined,
  visit: (path: string, object: JsonObject, s: SchemaNode) => void,
): void {
  if (!s) return;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) visitObjects(`${path}[${i}]`, x[i], s.items, visit);
    return;
  }
  if (!isJsonObject(x)) return;
  visit(path, x, s);
  for (const k of Object.keys(x)) {
    const prop = s.properties?.get(k);
    if (prop) visitObjects(childPath(path, k), x[k], prop, visit);
    else if (s.additionalProperties) visitObjects(`${path}[${k}]`, x[k], s.additionalProperties, visit);
  }
}

/** Coerce's work at an embedded resource: apiVersion and kind strings, metadata decoded in place. */
function coerceEmbedded(path: string, x: JsonObject, unknown: string[]): void {
  for (const k of Object.keys(x)) {
    const v = x[k];
    if (k === 'apiVersion' || k === 'kind') {
      if (typeof v !== 'string')
        throw new CoerceFailure(fieldErrors.invalid(childPath(path, k), v, 'must be a string'));
    } else if (k === 'metadata') {
      try {
        const decoded = decodeObjectMeta(v, `${path}.`);
        append(unknown, decoded.unknownFields);
        x.metadata = decoded.metadata;
      } catch (error) {
        if (!(error instanceof MetadataDecodeError)) throw error;
        throw new CoerceFailure(fieldErrors.invalid(childPath(path, 'metadata'), v, error.message));
      }
    }
  }
}

export interface EmbeddedCoercion {
  unknownFields: string[];
  /** The field error that makes decoding fail (a 400), if any. */
  error: FieldError | undefined;
}

/** CoerceWithOptions(nil, obj, schema, false): normalises embedded ObjectMeta in place. */
export function coerceEmbeddedResources(obj: unknown, root: SchemaNode): EmbeddedCoercion {
  const unknown: string[] = [];
  try {
    visitObjects('', obj, root, (path, x, s) => {
      if (s.embeddedResource) coerceEmbedded(path, x, unknown);
    });
  } catch (error) {
    if (error instanceof CoerceFailure) return { unknownFields: [], error: error.fieldError };
    throw error;
  }
  return { unknownFields: unknown.sort(compareGoStrings), error: undefined };
}

/** schemaobjectmeta.Validate(ctx, nil, obj, schema, false). */
export function validateEmbeddedResources(obj: unknown, root: SchemaNode): FieldError[] {
  const errs: FieldError[] = [];
  visitObjects('', obj, root, (path, x, s) => {
    if (s.embeddedResource) append(errs, validateEmbeddedResource(x, path));
  });
  return errs;
}
