/**
 * The errors kube-openapi's validator produces (k8s.io/kube-openapi/pkg/validation/errors/schema.go)
 * and their translation into field errors (apiextensions-apiserver validation.go:165,
 * kubeOpenAPIResultToFieldErrors).
 */
import { type FieldError, fieldErrors, NIL_PATH } from '../apimachinery/field-error.ts';
import { goJsonMarshal, goQuote } from '../apimachinery/go-format.ts';

export const REQUIRED = 602;
export const TOO_LONG = 603;
export const TOO_SHORT = 604;
export const PATTERN = 605;
export const ENUM = 606;
export const INVALID_TYPE = 1;
export const MULTIPLE_OF = 607;
export const MAX = 608;
export const MIN = 609;
export const UNIQUE = 610;
export const MAX_ITEMS = 611;
export const MIN_ITEMS = 612;
export const UNALLOWED_PROPERTY = 614;
export const TOO_MANY_PROPERTIES = 616;
export const TOO_FEW_PROPERTIES = 617;
export const MULTIPLE_OF_MUST_BE_POSITIVE = 624;

/** An *errors.Validation (code set) or a plain error (code undefined) from the validator. */
export interface OpenApiError {
  code: number | undefined;
  name: string;
  value: unknown;
  /** errors.Validation.Valid: the limit (max length, max items, max properties). */
  valid?: number;
  values?: readonly unknown[];
  message: string;
}

export function plainError(message: string): OpenApiError {
  return { code: undefined, name: '', value: undefined, message };
}

/** errors.InvalidType: the value printed with %q when it is a string. */
export function invalidType(name: string, typeName: string, value: unknown): OpenApiError {
  const message =
    typeof value === 'string'
      ? `${name} in body must be of type ${typeName}: ${goQuote(value)}`
      : `${name} in body must be of type ${typeName}`;
  return { code: INVALID_TYPE, name, value, message };
}

export function required(name: string): OpenApiError {
  return { code: REQUIRED, name, value: undefined, message: `${name} in body is required` };
}

/** An *errors.Validation; the limit (`valid`) or enum `values` are added by the caller where they apply. */
export function validation(code: number, name: string, value: unknown, message: string): OpenApiError {
  return { code, name, value, message };
}

/** kubeOpenAPIResultToFieldErrors: one field error per validator error, same order. */
export function toFieldErrors(errors: readonly OpenApiError[], basePath = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const err of errors) {
    if (err.code === undefined) {
      out.push(fieldErrors.invalid(basePath || NIL_PATH, '', err.message));
      continue;
    }
    let path = basePath || NIL_PATH;
    if (err.name.length > 0 && err.name !== '.') {
      const child = err.name.startsWith('.') ? err.name.slice(1) : err.name;
      path = basePath ? `${basePath}.${child}` : child;
    }
    const value = err.value === undefined ? '' : err.value;
    switch (err.code) {
      case REQUIRED:
        out.push(fieldErrors.required(path));
        break;
      case ENUM: {
        const values = (err.values ?? []).map((v) => (typeof v === 'string' ? v : goJsonMarshal(v)));
        out.push(fieldErrors.notSupported(path, err.value === undefined ? null : err.value, values));
        break;
      }
      case TOO_LONG:
        out.push(fieldErrors.tooLong(path, err.valid ?? -1));
        break;
      case MAX_ITEMS:
      case TOO_MANY_PROPERTIES:
        out.push(fieldErrors.tooMany(path, typeof err.value === 'number' ? err.value : -1, err.valid ?? -1));
        break;
      case INVALID_TYPE:
        out.push(fieldErrors.typeInvalid(path, value, err.message));
        break;
      default:
        out.push(fieldErrors.invalid(path, value, err.message));
    }
  }
  return out;
}
