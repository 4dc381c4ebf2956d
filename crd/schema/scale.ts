/**
 * The scale subresource's checks on the replica fields (customresource/validator.go:135,
 * ValidateScaleSpec and ValidateScaleStatus), with unstructured.NestedInt64's accessor errors.
 */

import { type FieldError, fieldErrors } from '../apimachinery/field-error.ts';
import { goFloat, goTypeName, isGoInt } from '../apimachinery/go-format.ts';
import { isJsonObject, type JsonObject } from '../json-value.ts';
import type { ScaleFields } from './compile.ts';

const MAX_INT32 = 2147483647;

/** fmt's %v for a decoded JSON value, for accessor error messages. */
function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'number') return isGoInt(v) ? String(v) : goFloat(v);
  if (typeof v === 'bigint') return String(v);
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  return `map[${Object.keys(v as JsonObject)
    .sort()
    .map((k) => `${k}:${goValue((v as JsonObject)[k])}`)
    .join(' ')}]`;
}

type Lookup = { found: false; error?: string } | { found: true; value: unknown };

/** unstructured.NestedFieldNoCopy. */
function nested(obj: JsonObject, fields: readonly string[]): Lookup {
  let current: unknown = obj;
  for (let i = 0; i < fields.length; i++) {
    if (!isJsonObject(current)) {
      return {
        found: false,
        error: `.${fields.slice(0, i + 1).join('.')} accessor error: ${goValue(current)} is of the type ${goTypeName(current)}, expected map[string]interface{}`,
      };
    }
    const field = fields[i] ?? '';
    if (!Object.hasOwn(current, field)) return { found: false };
    current = current[field];
  }
  return { found: true, value: current };
}

function replicasErrors(obj: JsonObject, path: string, fields: readonly string[]): FieldError[] {
  const lookup = nested(obj, fields);
  if (!lookup.found) return lookup.error ? [fieldErrors.invalid(path, 0, lookup.error)] : [];
  const value = lookup.value;
  if (typeof value === 'bigint') {
    return [
      fieldErrors.invalid(
        path,
        value,
        value < 0 ? 'should be a non-negative integer' : `should be less than or equal to ${MAX_INT32}`,
      ),
    ];
  }
  if (typeof value !== 'number' || !isGoInt(value)) {
    const msg = `.${fields.join('.')} accessor error: ${goValue(value)} is of the type ${goTypeName(value)}, expected int64`;
    return [fieldErrors.invalid(path, 0, msg)];
  }
  if (value < 0) return [fieldErrors.invalid(path, value, 'should be a non-negative integer')];
  if (value > MAX_INT32) return [fieldErrors.invalid(path, value, `should be less than or equal to ${MAX_INT32}`)];
  return [];
}

export function validateScaleSpec(obj: JsonObject, scale: ScaleFields | undefined): FieldError[] {
  return scale ? replicasErrors(obj, scale.specReplicasPath, scale.spec) : [];
}

export function validateScaleStatus(obj: JsonObject, scale: ScaleFields | undefined): FieldError[] {
  if (!scale) return [];
  const errs = replicasErrors(obj, scale.statusReplicasPath, scale.status);
  const path = scale.labelSelectorPath;
  const fields = scale.labelSelector;
  if (path && fields) {
    const lookup = nested(obj, fields);
    if (!lookup.found && lookup.error) errs.push(fieldErrors.invalid(path, '', lookup.error));
    else if (lookup.found && typeof lookup.value !== 'string') {
      const msg = `.${fields.join('.')} accessor error: ${goValue(lookup.value)} is of the type ${goTypeName(lookup.value)}, expected string`;
      errs.push(fieldErrors.invalid(path, '', msg));
    }
  }
  return errs;
}
