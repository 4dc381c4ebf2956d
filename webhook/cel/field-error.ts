/**
 * Field errors as k8s.io/apimachinery@v0.37.2/pkg/util/validation/field (errors.go, path.go) prints them.
 * Kept local to the CEL environment so it does not depend on the schema engine.
 */

export type FieldErrorType =
  | 'FieldValueInvalid'
  | 'FieldValueRequired'
  | 'FieldValueForbidden'
  | 'FieldValueDuplicate'
  | 'InternalError';

/** The marker for "print no value" (field.OmitValueType). */
export const OMIT_VALUE: unique symbol = Symbol('omit value');

export interface FieldError {
  type: FieldErrorType;
  /** The path as field.Path.String() prints it, e.g. `spec.ports[0].name`. */
  field: string;
  badValue: unknown;
  detail: string;
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueRequired: 'Required value',
  FieldValueForbidden: 'Forbidden',
  FieldValueDuplicate: 'Duplicate value',
  InternalError: 'Internal error',
};

/** Go's json.Marshal output for a JSON value (HTML-escaping <, > and &). */
export function goJson(value: unknown): string {
  const text = JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? Number(v) : v)) ?? 'null';
  return text
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Go's %q for a string (strconv.Quote), for the printable-ASCII and common-escape cases. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function formatNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  const s = String(n);
  return s.replace(/e([+-])(\d)$/, 'e$10$2');
}

/** field.Error.ErrorBody(): "Invalid value: 3: detail". */
export function fieldErrorBody(e: FieldError): string {
  let s = TYPE_TEXT[e.type];
  if (e.type === 'FieldValueInvalid' || e.type === 'FieldValueDuplicate') {
    const v = e.badValue;
    if (v !== OMIT_VALUE) {
      if (typeof v === 'string') s += `: ${goQuote(v)}`;
      else if (typeof v === 'number') s += `: ${formatNumber(v)}`;
      else if (typeof v === 'bigint' || typeof v === 'boolean') s += `: ${String(v)}`;
      else s += `: ${goJson(v)}`;
    }
  }
  if (e.detail.length > 0) s += `: ${e.detail}`;
  return s;
}

/** field.Error.Error(): "spec.replicas: Invalid value: 3: detail". */
export function formatFieldError(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}

/** errors.NewAggregate(...).Error() over field errors: one message, or `[e1, e2]` (duplicates once); '' for none. */
export function formatFieldErrors(errors: readonly FieldError[]): string {
  const texts = [...new Set(errors.map(formatFieldError))];
  if (texts.length === 0) return '';
  return texts.length === 1 ? (texts[0] as string) : `[${texts.join(', ')}]`;
}

/** Field paths: field.Path.Child / Index / Key. */
export function childPath(parent: string, name: string): string {
  return parent === '' ? name : `${parent}.${name}`;
}
export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}
export function keyPath(parent: string, key: string): string {
  return `${parent}[${key}]`;
}
