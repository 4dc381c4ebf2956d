import { goFloat, goJsonMarshal, goQuote, isGoInt } from './go-format.ts';

/**
 * field.ErrorType from k8s.io/apimachinery/pkg/util/validation/field/errors.go. The value is the
 * cause type the API server puts into `status.details.causes[].reason`.
 */
export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTooFew'
  | 'InternalError'
  | 'FieldValueTypeInvalid'
  | 'FieldValueTooShort';

/** field.ErrorType.String() (errors.go:225). */
const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTooFew: 'Too few',
  InternalError: 'Internal error',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueTooShort: 'Too short',
};

/** Types whose ErrorBody never prints the value (errors.go:118). */
const VALUELESS: ReadonlySet<FieldErrorType> = new Set([
  'FieldValueRequired',
  'FieldValueForbidden',
  'FieldValueTooLong',
  'FieldValueTooShort',
  'InternalError',
]);

/** field.omitValue: a bad value that is not printed at all. */
export const OMIT_VALUE: unique symbol = Symbol('omitValue');

/** Go's %v for the simple types, %q for strings, json.Marshal for everything else (errors.go:126). */
export function formatBadValue(value: unknown): string {
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return isGoInt(value) ? BigInt(value).toString() : goFloat(value);
  if (typeof value === 'bigint') return value.toString();
  return goJsonMarshal(value);
}

/** A field.Error: one validation failure at one field path, printed exactly as Go prints it. */
export class FieldError {
  readonly type: FieldErrorType;
  readonly field: string;
  readonly badValue: unknown;
  readonly detail: string;

  constructor(type: FieldErrorType, field: string, badValue: unknown, detail: string) {
    this.type = type;
    this.field = field;
    this.badValue = badValue;
    this.detail = detail;
  }

  /** ErrorBody(): the message without the field path. */
  errorBody(): string {
    let s = TYPE_TEXT[this.type];
    if (!VALUELESS.has(this.type) && this.badValue !== OMIT_VALUE) {
      s += `: ${formatBadValue(this.badValue)}`;
    }
    if (this.detail.length > 0) s += `: ${this.detail}`;
    return s;
  }

  /** Error(): `<field>: <body>`. */
  toString(): string {
    return `${this.field}: ${this.errorBody()}`;
  }

  toJSON(): { type: FieldErrorType; field: string; message: string } {
    return { type: this.type, field: this.field, message: this.errorBody() };
  }
}

/** The field path Go prints for a nil *field.Path. */
export const NIL_PATH = '<nil>';

export const fieldErrors = {
  invalid: (field: string, value: unknown, detail: string) => new FieldError('FieldValueInvalid', field, value, detail),
  typeInvalid: (field: string, value: unknown, detail: string) =>
    new FieldError('FieldValueTypeInvalid', field, value, detail),
  required: (field: string, detail = '') => new FieldError('FieldValueRequired', field, '', detail),
  forbidden: (field: string, detail: string) => new FieldError('FieldValueForbidden', field, '', detail),
  duplicate: (field: string, value: unknown) => new FieldError('FieldValueDuplicate', field, value, ''),
  /** field.NotSupported (errors.go:313): each supported value quoted with strconv.Quote. */
  notSupported: (field: string, value: unknown, validValues: readonly string[]) =>
    new FieldError(
      'FieldValueNotSupported',
      field,
      value,
      validValues.length > 0 ? `supported values: ${validValues.map(goQuote).join(', ')}` : '',
    ),
  /** field.TooLong (errors.go:347). */
  tooLong: (field: string, maxLength: number) =>
    new FieldError(
      'FieldValueTooLong',
      field,
      '<value omitted>',
      maxLength >= 0 ? `may not be more than ${maxLength} ${maxLength === 1 ? 'byte' : 'bytes'}` : 'value is too long',
    ),
  /** field.TooMany (errors.go:398). */
  tooMany: (field: string, actual: number, max: number) =>
    new FieldError(
      'FieldValueTooMany',
      field,
      actual >= 0 ? actual : OMIT_VALUE,
      max >= 0 ? `must have at most ${max} ${max === 1 ? 'item' : 'items'}` : 'has too many items',
    ),
};

/**
 * The message of utilerrors.NewAggregate(errs) after ErrorList.ToAggregate(): duplicates (by
 * message) dropped, one error printed bare, several as `[e1, e2]` (util/errors/errors.go:70); ''
 * for none (the aggregate is nil).
 */
export function aggregateMessage(errors: readonly FieldError[]): string {
  const seen = new Set<string>();
  const messages: string[] = [];
  for (const error of errors) {
    const message = error.toString();
    if (seen.has(message)) continue;
    seen.add(message);
    messages.push(message);
  }
  if (messages.length <= 1) return messages[0] ?? '';
  return `[${messages.join(', ')}]`;
}

/** apierrors.NewInvalid's message (api/errors/errors.go:284). */
export function invalidMessage(qualifiedKind: string, name: string, errors: readonly FieldError[]): string {
  if (errors.length === 0) return `${qualifiedKind} ${goQuote(name)} is invalid`;
  return `${qualifiedKind} ${goQuote(name)} is invalid: ${aggregateMessage(errors)}`;
}
