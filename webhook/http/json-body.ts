import { isAscii } from 'node:buffer';
import { ReviewError } from '../admission/review.ts';

/** controller-runtime's limit (pkg/webhook/admission/http.go, maxRequestSize): 7 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 7 * 1024 * 1024;
/** Far deeper than any object the API server sends; keeps recursive walks off the stack limit. */
export const DEFAULT_MAX_DEPTH = 100;

/**
 * Values (objects, arrays, scalars) one review may hold. A StaticSite review from the API server
 * holds a few hundred (the API server has pruned unknown fields before calling); each value costs
 * the engine a few hundred bytes across its copies, so this bounds a request's memory whatever its
 * shape (300,000 tiny unknown fields in 5 MB took the process past 400 MB).
 */
export const DEFAULT_MAX_VALUES = 100_000;

/** The bytes of JSON's structure (all ASCII: a UTF-8 multi-byte character never contains one). */
const Byte = {
  Quote: 0x22,
  Backslash: 0x5c,
  Comma: 0x2c,
  Colon: 0x3a,
  OpenArray: 0x5b,
  CloseArray: 0x5d,
  OpenObject: 0x7b,
  CloseObject: 0x7d,
  Space: 0x20,
  Tab: 0x09,
  Newline: 0x0a,
  Return: 0x0d,
} as const;

/**
 * What is wrong with the shape of a JSON text, read from its bytes before anything is parsed:
 * nesting deeper than `maxDepth` (objects and arrays, the root at depth 1), or more than `maxValues`
 * values (objects, arrays and scalars; keys are not values). One pass, no allocation beyond a stack
 * of `maxDepth` container kinds, so a body built to exhaust the heap (millions of `[]` or `{}`) is
 * refused before JSON.parse builds any of it. Counting follows the text: a key repeated in one
 * object counts each time, which only makes the check stricter. A malformed text is left for
 * JSON.parse to name.
 */
export function shapeProblem(json: Uint8Array, maxDepth: number, maxValues: number): 'depth' | 'values' | undefined {
  const inArray = new Uint8Array(maxDepth + 2);
  let depth = 0;
  let values = 0;
  let expectValue = true;
  for (let i = 0; i < json.length; i++) {
    const byte = json[i];
    switch (byte) {
      case Byte.Space:
      case Byte.Tab:
      case Byte.Newline:
      case Byte.Return:
        break;
      case Byte.Quote:
        if (expectValue && ++values > maxValues) return 'values';
        expectValue = false;
        for (i++; i < json.length && json[i] !== Byte.Quote; i++) if (json[i] === Byte.Backslash) i++;
        break;
      case Byte.OpenArray:
      case Byte.OpenObject:
        if (++values > maxValues) return 'values';
        if (++depth > maxDepth) return 'depth';
        inArray[depth] = byte === Byte.OpenArray ? 1 : 0;
        expectValue = byte === Byte.OpenArray;
        break;
      case Byte.CloseArray:
      case Byte.CloseObject:
        if (depth > 0) depth--;
        expectValue = false;
        break;
      case Byte.Comma:
        expectValue = inArray[depth] === 1;
        break;
      case Byte.Colon:
        expectValue = true;
        break;
      default:
        // The first byte of a number, true, false or null.
        if (expectValue && ++values > maxValues) return 'values';
        expectValue = false;
    }
  }
  return undefined;
}

/** Whether a JSON text nests deeper than `limit`. */
export function exceedsDepth(json: Uint8Array, limit: number): boolean {
  return shapeProblem(json, limit, Number.POSITIVE_INFINITY) === 'depth';
}

/** JSON.rawJSON and the reviver's source text (ES2025, Node >= 21), not yet in TypeScript's lib. */
const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;
type SourceReviver = (key: string, value: unknown, context: { source?: string }) => unknown;
const INTEGER = /^-?\d+$/;

/**
 * Keeps integers beyond 2^53 exactly as written (the API server holds them as int64): they come back
 * out of JSON.stringify with the same digits instead of the nearest double.
 */
const exactIntegers: SourceReviver = (_key, value, context) =>
  typeof value === 'number' &&
  !Number.isSafeInteger(value) &&
  context.source !== undefined &&
  INTEGER.test(context.source)
    ? rawJSON(context.source)
    : value;

export interface DecodeOptions {
  /** At most this many values in the body (DEFAULT_MAX_VALUES). */
  maxValues?: number;
  /** Integers beyond 2^53 stay exact (opaque values that serialize as written): for bodies only passed through. */
  exactIntegers?: boolean;
}

/** Checks the content type and decodes the body; every failure names the problem. */
export function decodeJsonBody(
  contentType: string | undefined,
  body: unknown,
  maxDepth: number,
  options: DecodeOptions = {},
): unknown {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new ReviewError(415, `contentType=${contentType ?? ''}, expected application/json`);
  }
  if (!Buffer.isBuffer(body) || body.length === 0) throw new ReviewError(400, 'request body is empty');
  const maxValues = options.maxValues ?? DEFAULT_MAX_VALUES;
  const problem = shapeProblem(body, maxDepth, maxValues);
  if (problem === 'depth') throw new ReviewError(400, `request body nests deeper than ${maxDepth} levels`);
  if (problem === 'values') throw new ReviewError(400, `request body holds more than ${maxValues} JSON values`);
  let parsed: unknown;
  try {
    // For an ASCII body (most objects are), latin1 decodes the same text as UTF-8
    // and builds V8's one-byte string without a UTF-8 pass: about 1.5 µs of a 25 µs review.
    const text = isAscii(body) ? body.toString('latin1') : body.toString('utf8');
    parsed = options.exactIntegers
      ? JSON.parse(text, exactIntegers as Parameters<typeof JSON.parse>[1])
      : JSON.parse(text);
  } catch (error) {
    throw new ReviewError(400, `request body is not valid JSON: ${(error as Error).message}`);
  }
  return parsed;
}
