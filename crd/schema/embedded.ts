/**
 * Resources embedded in a custom resource (`x-kubernetes-embedded-resource`): their ObjectMeta is
 * coerced while decoding (objectmeta/coerce.go, non-root) and validated with the object
 * (objectmeta/validation.go).
 */

import { append } from '../apimachinery/append.ts';
import { type FieldError, fieldErrors } from '../apimachinery/field-error.ts';
import { compareGoStrings } from '../apimachinery/go-format.ts';
import { isJsonObject } from '../apimachinery/json-value.ts';
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

function coerce(path: string, x: unknown, s: SchemaNode | undefined, unknown: string[]): void {
  if (!s) return;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) coerce(`${path}[${i}]`, x[i], s.items, unknown);
    return;
  }
  if (!isJsonObject(x)) return;
  for (const k of Object.keys(x)) {
    const v = x[k];
    if (s.embeddedResource) {
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
    const prop = s.properties?.get(k);
    if (prop) coerce(childPath(path, k), x[k], prop, unknown);
    else if (s.additionalProperties) coerce(`${path}[${k}]`, x[k], s.additionalProperties, unknown);
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
    coerce('', obj, root, unknown);
  } catch (error) {
    if (error instanceof CoerceFailure) return { unknownFields: [], error: error.fieldError };
    throw error;
  }
  return { unknownFields: unknown.sort(compareGoStrings), error: undefined };
}

function validate(path: string, x: unknown, s: SchemaNode | undefined, errs: FieldError[]): void {
  if (!s) return;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) validate(`${path}[${i}]`, x[i], s.items, errs);
    return;
  }
  if (!isJsonObject(x)) return;
  if (s.embeddedResource) append(errs, validateEmbeddedResource(x, path));
  for (const [k, v] of Object.entries(x)) {
    const prop = s.properties?.get(k);
    if (prop) validate(childPath(path, k), v, prop, errs);
    else if (s.additionalProperties) validate(`${path}[${k}]`, v, s.additionalProperties, errs);
  }
}

/** schemaobjectmeta.Validate(ctx, nil, obj, schema, false). */
export function validateEmbeddedResources(obj: unknown, root: SchemaNode): FieldError[] {
  const errs: FieldError[] = [];
  validate('', obj, root, errs);
  return errs;
}
