import { goFloat, goJsonMarshal, goQuote, goQuoteLength, isGoInt } from './go-format.ts';

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

/**
 * A bad value printed once by its producer: the errors that share it (every extra controller
 * reference prints all the references) share one string instead of printing it again each.
 */
export class PrintedValue {
  readonly text: string;
  constructor(value: unknown) {
    this.text = formatBadValue(value);
  }
}

/** Go's %v for the simple types, %q for strings, json.Marshal for everything else (errors.go:126). */
export function formatBadValue(value: unknown): string {
  if (value instanceof PrintedValue) return value.text;
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

  private body: string | undefined;

  private printed: string | undefined | null = null;

  /** Whether ErrorBody prints the bad value. */
  printsValue(): boolean {
    return !VALUELESS.has(this.type) && this.badValue !== OMIT_VALUE;
  }

  /** The printed bad value (made once), or undefined when ErrorBody prints none. */
  printedValue(): string | undefined {
    if (this.printed === null) {
      this.printed =
        VALUELESS.has(this.type) || this.badValue === OMIT_VALUE ? undefined : formatBadValue(this.badValue);
    }
    return this.printed;
  }

  /** errorBody().length, without making the body. */
  bodyLength(): number {
    if (this.body !== undefined) return this.body.length;
    let valueLength = 0;
    if (this.printed !== null) valueLength = this.printed === undefined ? -2 : this.printed.length;
    else if (!this.printsValue()) valueLength = -2;
    else if (typeof this.badValue === 'string') valueLength = goQuoteLength(this.badValue);
    else valueLength = (this.printedValue() as string).length;
    return TYPE_TEXT[this.type].length + 2 + valueLength + (this.detail.length > 0 ? 2 + this.detail.length : 0);
  }

  /** ErrorBody(): the message without the field path (made once). */
  errorBody(): string {
    if (this.body !== undefined) return this.body;
    let s = TYPE_TEXT[this.type];
    const value = this.printedValue();
    if (value !== undefined) s += `: ${value}`;
    if (this.detail.length > 0) s += `: ${this.detail}`;
    this.body = s;
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
export function aggregateMessage(errors: readonly FieldError[], limit = Number.POSITIVE_INFINITY): string {
  return cutParts(aggregateParts(distinctMessages(errors)), limit);
}

/** NewAggregate's Error(): one message bare, several as `[e1, e2]`. */
function aggregateParts(messages: readonly FieldError[]): Array<string | FieldError> {
  if (messages.length <= 1) return [...messages];
  const parts: Array<string | FieldError> = ['['];
  for (const [i, m] of messages.entries()) {
    if (i > 0) parts.push(', ');
    parts.push(m);
  }
  parts.push(']');
  return parts;
}

/** Printed values up to this long are compared as part of the whole message text. */
const SHORT_VALUE = 1024;

/**
 * The errors whose messages differ, first of each kept, compared by their parts (detail, type,
 * field, printed value) instead of their whole texts: 100,000 invalid labels print 100,000
 * messages of about 300 characters that differ only in a short value, and hashing each whole text
 * took most of a review. Equal parts print equal texts; different parts printing one text would
 * need a value or detail holding ": " that splits at another place with the same field and type,
 * which no pair of the API server's errors does. A printed value shared by many errors (every
 * extra controller reference prints all the references) is compared by reference, never hashed.
 */
function child<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

function distinctMessages(errors: readonly FieldError[]): FieldError[] {
  const seen = new Map<string, Map<string, Map<string, Set<unknown>>>>();
  const kept: FieldError[] = [];
  for (const error of errors) {
    const shared = error.badValue instanceof PrintedValue ? error.badValue : undefined;
    const byType = child(seen, error.detail, () => new Map<string, Map<string, Set<unknown>>>());
    // By the type's text: FieldValueInvalid and FieldValueTypeInvalid print the same.
    const byField = child(byType, TYPE_TEXT[error.type], () => new Map<string, Set<unknown>>());
    const values = child(byField, error.field, () => new Set<unknown>());
    // A string prints as its strconv.Quote, one to one: the string itself is the key, unprinted
    // (with a mark, so it never meets another kind's printed text).
    const key =
      shared !== undefined && shared.text.length > SHORT_VALUE
        ? shared
        : typeof error.badValue === 'string' && error.printsValue()
          ? `"${error.badValue}`
          : error.printedValue();
    if (values.has(key)) continue;
    if (key instanceof PrintedValue && [...values].some((v) => (v instanceof PrintedValue ? v.text : v) === key.text)) {
      continue;
    }
    values.add(key);
    kept.push(error);
  }
  return kept;
}

/**
 * `text` cut to `limit` characters with how many more there were, the webhook's bound on what it
 * echoes (a message beyond it is kept whole by the API server; the webhook takes no more than this).
 */
export function cutText(text: string, limit = Number.POSITIVE_INFINITY): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}... (${text.length - limit} more characters)`;
}

/** cutText of the parts joined (FieldErrors print on demand), building no more than `limit` characters. */
function cutParts(parts: ReadonlyArray<string | FieldError>, limit: number): string {
  const text = (part: string | FieldError) => (typeof part === 'string' ? part : part.toString());
  const length = (part: string | FieldError) =>
    typeof part === 'string' ? part.length : part.field.length + 2 + part.bodyLength();
  let total = 0;
  for (const part of parts) total += length(part);
  if (total <= limit) return parts.map(text).join('');
  let built = '';
  for (const part of parts) {
    built += text(part);
    if (built.length >= limit) break;
  }
  return `${built.slice(0, limit)}... (${total - limit} more characters)`;
}

/**
 * The distinct errors an aggregate message lists (distinctMessages), each printed, `limit` characters
 * in all: the one that crosses it is cut (cutText), later ones left out. Every extra controller
 * reference prints all the references, so the whole list grows with the square of the input.
 */
export function printedErrors(errors: readonly FieldError[], limit = Number.POSITIVE_INFINITY): string[] {
  const printed: string[] = [];
  let budget = limit;
  for (const error of distinctMessages(errors)) {
    if (budget <= 0) break;
    const text = cutParts([error], budget);
    printed.push(text);
    budget -= error.field.length + 2 + error.bodyLength();
  }
  return printed;
}

/** apierrors.NewInvalid's message (api/errors/errors.go:284), cut to `limit` characters (cutText). */
export function invalidMessage(
  qualifiedKind: string,
  name: string,
  errors: readonly FieldError[],
  limit = Number.POSITIVE_INFINITY,
): string {
  const head = `${qualifiedKind} ${goQuote(name)} is invalid`;
  if (errors.length === 0) return cutText(head, limit);
  const parts = aggregateParts(distinctMessages(errors));
  parts.unshift(`${head}: `);
  return cutParts(parts, limit);
}
