/**
 * ObjectMeta validation with the API server's messages: apimachinery api/validation/objectmeta.go
 * (create and update), objectmeta/validation.go for embedded resources, and the finalizer warnings of
 * customresource/validator.go.
 */

import { append } from '../apimachinery/append.ts';
import { type FieldError, fieldErrors, PrintedValue } from '../apimachinery/field-error.ts';
import { compareGoStrings, goQuote, utf8Length } from '../apimachinery/go-format.ts';
import { GoStruct } from '../apimachinery/go-struct.ts';
import {
  isDns1035Label,
  isDns1123Label,
  isLabelValue,
  isQualifiedName,
  pathSegmentName,
} from '../apimachinery/names.ts';
import { isJsonObject, type JsonObject } from '../json-value.ts';
import { decodeObjectMeta } from './objectmeta-decode.ts';

function str(meta: JsonObject, key: string): string {
  const v = meta[key];
  return typeof v === 'string' ? v : '';
}

function stringMap(meta: JsonObject, key: string): Record<string, string> {
  const v = meta[key];
  return isJsonObject(v) ? (v as Record<string, string>) : {};
}

const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * (1 << 10);

export interface MetaValidationOptions {
  requiresNamespace: boolean;
  /** NameIsDNSSubdomain at the root; path segment rules inside embedded resources. */
  nameFn: (name: string, prefix: boolean) => string[];
  /** The name the API server generates from generateName is not known here: skip the name check then. */
  nameMayBeGenerated: boolean;
  /** labelErrors(meta, path), when the caller has them already (an update checks the labels three times). */
  labelErrors?: readonly FieldError[];
}

/** ValidateObjectMetaAccessor on create (objectmeta.go:207), in its order. */
export function validateObjectMeta(meta: JsonObject, path: string, options: MetaValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  const generateName = str(meta, 'generateName');
  const name = str(meta, 'name');
  if (generateName.length > 0) {
    for (const msg of options.nameFn(generateName, true))
      errs.push(fieldErrors.invalid(`${path}.generateName`, generateName, msg));
  }
  if (name.length === 0) {
    if (!(options.nameMayBeGenerated && generateName.length > 0)) {
      errs.push(fieldErrors.required(`${path}.name`, 'name or generateName is required'));
    }
  } else {
    for (const msg of options.nameFn(name, false)) errs.push(fieldErrors.invalid(`${path}.name`, name, msg));
  }
  const namespace = str(meta, 'namespace');
  if (options.requiresNamespace) {
    if (namespace.length === 0) errs.push(fieldErrors.required(`${path}.namespace`));
    else
      for (const msg of isDns1123Label(namespace)) errs.push(fieldErrors.invalid(`${path}.namespace`, namespace, msg));
  } else if (namespace.length !== 0) {
    errs.push(fieldErrors.forbidden(`${path}.namespace`, 'not allowed on this type'));
  }
  const generation = meta.generation;
  if (typeof generation === 'number' && generation < 0) {
    errs.push(fieldErrors.invalid(`${path}.generation`, generation, 'must be greater than or equal to 0'));
  }
  append(errs, options.labelErrors ?? labelErrors(meta, path));
  const annotations = stringMap(meta, 'annotations');
  let annotationSize = 0;
  for (const [k, v] of Object.entries(annotations)) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(fieldErrors.invalid(`${path}.annotations`, k, msg));
    annotationSize += utf8Length(k) + utf8Length(v);
  }
  if (annotationSize > TOTAL_ANNOTATION_SIZE_LIMIT)
    errs.push(fieldErrors.tooLong(`${path}.annotations`, TOTAL_ANNOTATION_SIZE_LIMIT));
  append(errs, validateOwnerReferences(meta.ownerReferences, `${path}.ownerReferences`));
  const finalizers = Array.isArray(meta.finalizers) ? (meta.finalizers as string[]) : [];
  for (const f of finalizers) {
    for (const msg of isQualifiedName(f)) errs.push(fieldErrors.invalid(`${path}.finalizers`, f, msg));
  }
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errs.push(
      fieldErrors.invalid(
        `${path}.finalizers`,
        finalizers,
        'finalizer orphan and foregroundDeletion cannot be both set',
      ),
    );
  }
  return errs;
}

/** An OwnerReference as encoding/json prints the struct: declaration order, omitempty pointers. */
function ownerReferenceValue(ref: JsonObject): GoStruct {
  const fields: [string, unknown][] = [
    ['apiVersion', ref.apiVersion ?? ''],
    ['kind', ref.kind ?? ''],
    ['name', ref.name ?? ''],
    ['uid', ref.uid ?? ''],
  ];
  if (typeof ref.controller === 'boolean') fields.push(['controller', ref.controller]);
  if (typeof ref.blockOwnerDeletion === 'boolean') fields.push(['blockOwnerDeletion', ref.blockOwnerDeletion]);
  return new GoStruct(fields);
}

/** ValidateOwnerReferences (objectmeta.go:97). */
function validateOwnerReferences(value: unknown, path: string): FieldError[] {
  if (!Array.isArray(value)) return [];
  const refs = value as JsonObject[];
  const errs: FieldError[] = [];
  let firstController = '';
  // Every extra controller reference prints all the references: printed once, shared by each error.
  let printedRefs: PrintedValue | undefined;
  const allRefs = () => {
    printedRefs ??= new PrintedValue(refs.map(ownerReferenceValue));
    return printedRefs;
  };
  refs.forEach((ref, i) => {
    const at = `${path}[${i}]`;
    const apiVersion = String(ref.apiVersion ?? '');
    const kind = String(ref.kind ?? '');
    const slashes = apiVersion.split('/').length - 1;
    const version = slashes === 0 ? apiVersion : (apiVersion.split('/')[1] ?? '');
    if (apiVersion.length === 0) errs.push(fieldErrors.required(`${at}.apiVersion`, 'must not be empty'));
    else if (slashes > 1 || version.length === 0) {
      errs.push(fieldErrors.invalid(`${at}.apiVersion`, apiVersion, 'must be <group>/<version> or <version>'));
    }
    if (kind.length === 0) errs.push(fieldErrors.required(`${at}.kind`, 'must not be empty'));
    if (String(ref.name ?? '').length === 0) errs.push(fieldErrors.required(`${at}.name`, 'must not be empty'));
    if (String(ref.uid ?? '').length === 0) errs.push(fieldErrors.required(`${at}.uid`, 'must not be empty'));
    if (slashes <= 1 && apiVersion === 'v1' && kind === 'Event') {
      errs.push(fieldErrors.invalid(at, ownerReferenceValue(ref), '/v1, Kind=Event is disallowed from being an owner'));
    }
    if (ref.controller === true) {
      const current = `${kind}/${String(ref.name ?? '')}`;
      if (firstController !== '') {
        errs.push(
          fieldErrors.invalid(
            path,
            allRefs(),
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else firstController = current;
    }
  });
  return errs;
}

/** ValidateLabels (metav1validation) of `meta`'s labels: every key a qualified name, every value a label value. */
export function labelErrors(meta: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const field = `${path}.labels`;
  for (const [k, v] of Object.entries(stringMap(meta, 'labels'))) {
    for (const msg of isQualifiedName(k)) errs.push(fieldErrors.invalid(field, k, msg));
    for (const msg of isLabelValue(v)) errs.push(fieldErrors.invalid(field, v, msg));
  }
  return errs;
}

/** ValidateObjectMetaAccessorUpdate's immutable fields (objectmeta.go:337); `labels` as in MetaValidationOptions. */
export function validateObjectMetaUpdate(
  meta: JsonObject,
  old: JsonObject,
  path: string,
  labels: readonly FieldError[] = labelErrors(meta, path),
): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of ['name', 'namespace', 'uid']) {
    if (str(meta, key) !== str(old, key)) {
      errs.push(fieldErrors.invalid(`${path}.${key}`, str(meta, key), 'field is immutable'));
    }
  }
  append(errs, labels);
  for (const k of Object.keys(stringMap(meta, 'annotations'))) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(fieldErrors.invalid(`${path}.annotations`, k, msg));
  }
  return errs;
}

/** schema.ParseGroupVersion's error, or undefined. */
function groupVersionError(apiVersion: string): string | undefined {
  if (apiVersion === '' || apiVersion === '/') return undefined;
  const slashes = apiVersion.split('/').length - 1;
  return slashes > 1 ? `unexpected GroupVersion string: ${apiVersion}` : undefined;
}

/** validateEmbeddedResource (objectmeta/validation.go:387). */
export function validateEmbeddedResource(x: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!Object.hasOwn(x, 'apiVersion')) errs.push(fieldErrors.required(`${path}.apiVersion`));
  if (!Object.hasOwn(x, 'kind')) errs.push(fieldErrors.required(`${path}.kind`));
  for (const [k, v] of Object.entries(x)) {
    if (k === 'apiVersion') {
      if (typeof v !== 'string') errs.push(fieldErrors.invalid(`${path}.apiVersion`, v, 'must be a string'));
      else if (v.length === 0) errs.push(fieldErrors.invalid(`${path}.apiVersion`, v, 'must not be empty'));
      else {
        const err = groupVersionError(v);
        if (err) errs.push(fieldErrors.invalid(`${path}.apiVersion`, v, err));
      }
    } else if (k === 'kind') {
      if (typeof v !== 'string') errs.push(fieldErrors.invalid(`${path}.kind`, v, 'must be a string'));
      else if (v.length === 0) errs.push(fieldErrors.invalid(`${path}.kind`, v, 'must not be empty'));
      else {
        const msgs = isDns1035Label(v.toLowerCase());
        if (msgs.length > 0) {
          errs.push(
            fieldErrors.invalid(
              `${path}.kind`,
              v,
              `may have mixed case, but should otherwise match: ${msgs.join(',')}`,
            ),
          );
        }
      }
    } else if (k === 'metadata') {
      let meta: JsonObject;
      try {
        meta = decodeObjectMeta(v, '').metadata;
      } catch (error) {
        errs.push(fieldErrors.invalid(`${path}.metadata`, v, (error as Error).message));
        continue;
      }
      if (str(meta, 'name').length === 0) meta = { ...meta, name: 'fakename' };
      append(
        errs,
        validateObjectMeta(meta, `${path}.metadata`, {
          requiresNamespace: str(meta, 'namespace').length > 0,
          nameFn: pathSegmentName,
          nameMayBeGenerated: false,
        }),
      );
    }
  }
  return errs;
}

const STANDARD_FINALIZERS: ReadonlySet<string> = new Set(['orphan', 'foregroundDeletion', 'kubernetes']);

/** Finalizer warnings on create/update (customresource/validator.go:86, strategy.go:234). */
export function finalizerWarnings(finalizers: readonly string[]): string[] {
  const warnings: string[] = [];
  const path = 'metadata.finalizers';
  const unique = finalizers.length > 1 ? [...new Set(finalizers)].sort(compareGoStrings) : finalizers;
  for (const f of unique) {
    for (const msg of isQualifiedName(f)) warnings.push(`${path}: ${goQuote(f)}: ${msg}`);
    if (!f.includes('/') && !STANDARD_FINALIZERS.has(f)) {
      warnings.push(
        f.includes('.')
          ? `${path}: ${goQuote(f)}: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`
          : `${path}: ${goQuote(f)}: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers`,
      );
    }
  }
  return warnings;
}
