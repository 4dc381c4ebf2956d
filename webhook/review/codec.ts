/**
 * Bytes to a review and a decision back to bytes: the first and the last step of the pipeline
 * (pipeline.ts). Decoding checks the content type, the body's shape (depth and value count, read
 * from the bytes before anything is parsed, unless the pipeline parsed a small body first and read
 * its shape from the value), parses, and checks the envelope; encoding serializes the answer once,
 * with the outcome and the log line the HTTP layer needs.
 */
import { isAscii } from 'node:buffer';
import { CONVERT_PATH, MUTATE_PATH, VALIDATE_PATH } from '../../api/constants.ts';
import { JsonByte as Byte } from '../../crd/json-bytes.ts';
import { parseJsonInt64, stringifyJson } from '../../crd/json-int64.ts';
import { boundMessage, LOG_FIELD_LIMIT, LOG_MESSAGE_LIMIT } from '../admission/bounds.ts';
import { errored } from '../admission/responses.ts';
import {
  type AdmissionApiVersion,
  type AdmissionRequest,
  type AdmissionResponse,
  parseAdmissionReview,
  ReviewError,
  reviewResponse,
} from '../admission/review.ts';
import {
  type ConversionRequest,
  type ConversionReview,
  conversionFailure,
  parseConversionReview,
} from '../conversion/convert.ts';
import type { Verdict } from './cross-object.ts';

/** The paths the webhook configurations and the CRD's conversion stanza call (api/constants.ts). */
export const REVIEW_PATHS = [MUTATE_PATH, VALIDATE_PATH, CONVERT_PATH] as const;
export type ReviewPath = (typeof REVIEW_PATHS)[number];

/** One request body to answer, as the HTTP layer read it. */
export interface ReviewTask {
  path: ReviewPath;
  contentType: string | undefined;
  body: Uint8Array;
}

/** Far deeper than any object the API server sends; keeps recursive walks off the stack limit. */
export const DEFAULT_MAX_DEPTH = 100;

/**
 * Values (objects, arrays, scalars) one review may hold. A StaticSite review from the API server
 * holds a few hundred (the API server has pruned unknown fields before calling); each value costs
 * the engine a few hundred bytes across its copies, so this bounds a request's memory whatever its
 * shape (300,000 tiny unknown fields in 5 MB took the process past 400 MB).
 */
export const DEFAULT_MAX_VALUES = 100_000;

export interface DecodeLimits {
  maxDepth?: number;
  maxValues?: number;
}

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

export interface DecodeOptions extends DecodeLimits {
  /** The caller already checked the body's shape against limits at least as strict. */
  shapeChecked?: boolean;
  /** The body as parseBody read it, its shape checked against limits at least as strict. */
  parsed?: { value: unknown };
}

/**
 * The body's JSON value, every int64 exact (throws what JSON.parse throws). For an ASCII body (most
 * objects are), latin1 decodes the same text as UTF-8 and builds V8's one-byte string without a
 * UTF-8 pass: about 1.5 µs of a 25 µs review.
 */
export function parseBody(body: Buffer): unknown {
  const text = isAscii(body) ? body.toString('latin1') : body.toString('utf8');
  // Every int64 exact, as the API server holds it (a BigInt beyond 2^53): verdicts, messages and
  // patches see the digits sent. The scan for a 16-digit run keeps the reviver off ordinary reviews.
  return parseJsonInt64(text);
}

/**
 * shapeProblem's verdict read from a parsed value instead of its text, in a quarter of the time for
 * a review of 60 values: the same depth and count, except that a key repeated in one object counts
 * once (JSON.parse kept the last). Stops at the first value past a limit.
 */
export function valueShapeProblem(root: unknown, maxDepth: number, maxValues: number): 'depth' | 'values' | undefined {
  let values = 0;
  const walk = (value: unknown, depth: number): 'depth' | 'values' | undefined => {
    if (++values > maxValues) return 'values';
    if (typeof value !== 'object' || value === null) return undefined;
    if (depth > maxDepth) return 'depth';
    if (Array.isArray(value)) {
      for (const item of value) {
        const problem = walk(item, depth + 1);
        if (problem) return problem;
      }
      return undefined;
    }
    for (const key in value) {
      const problem = walk((value as Record<string, unknown>)[key], depth + 1);
      if (problem) return problem;
    }
    return undefined;
  };
  return walk(root, 1);
}

/** Checks the content type and decodes the body; every failure is a ReviewError naming the problem. */
export function decodeJsonBody(contentType: string | undefined, body: unknown, options: DecodeOptions = {}): unknown {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new ReviewError(415, `contentType=${contentType ?? ''}, expected application/json`);
  }
  if (!Buffer.isBuffer(body) || body.length === 0) throw new ReviewError(400, 'request body is empty');
  if (options.parsed) return options.parsed.value;
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const maxValues = options.maxValues ?? DEFAULT_MAX_VALUES;
  const problem = options.shapeChecked ? undefined : shapeProblem(body, maxDepth, maxValues);
  if (problem === 'depth') throw new ReviewError(400, `request body nests deeper than ${maxDepth} levels`);
  if (problem === 'values') throw new ReviewError(400, `request body holds more than ${maxValues} JSON values`);
  try {
    return parseBody(body);
  } catch (error) {
    throw new ReviewError(400, `request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** A review whose envelope checked out: what the decisions read. */
export type DecodedReview =
  | { path: typeof MUTATE_PATH | typeof VALIDATE_PATH; apiVersion: AdmissionApiVersion; request: AdmissionRequest }
  | { path: typeof CONVERT_PATH; request: ConversionRequest };

/** The body as a review for its path (throws ReviewError: a 4xx naming the problem). */
export function decodeReview(task: ReviewTask, options: DecodeOptions = {}): DecodedReview {
  if (task.path === CONVERT_PATH) {
    const decoded = decodeJsonBody(task.contentType, task.body, options);
    return { path: CONVERT_PATH, request: parseConversionReview(decoded) };
  }
  const { apiVersion, request } = parseAdmissionReview(decodeJsonBody(task.contentType, task.body, options));
  return { path: task.path, apiVersion, request };
}

/** The review's envelope, known once it decoded: enough to answer it if its evaluation never ends. */
export interface ReviewEnvelope {
  path: ReviewPath;
  apiVersion: string;
  uid: string;
  operation: string;
}

export function envelopeOf(review: DecodedReview): ReviewEnvelope {
  if (review.path === CONVERT_PATH) {
    return { path: CONVERT_PATH, apiVersion: 'apiextensions.k8s.io/v1', uid: review.request.uid, operation: 'CONVERT' };
  }
  const { uid, operation } = review.request;
  return { path: review.path, apiVersion: review.apiVersion, uid, operation };
}

/**
 * What a review came to before it is encoded: plain data, so a review worker can hand it over.
 * An admission decision carries its verdict (the response, and the facts the cross-object steps
 * read: the hostname the write claims, the shard label it lacks).
 */
export type Decision =
  | ({ kind: 'admission'; apiVersion: AdmissionApiVersion; uid: string; operation: string } & Verdict)
  /**
   * A conversion is encoded where it is decided (no cross-object step reads it, and its objects are
   * the largest part of the answer), `failure` its message.
   */
  | { kind: 'conversion'; uid: string; text: string; failure?: string };

/** A request that could not be read as a review (a 4xx with a Status), or an exception (a 500, logged). */
export type Refusal =
  | { kind: 'failed'; code: number; message: string }
  | { kind: 'panic'; message: string; stack: string };

export type Decided = Decision | Refusal;

/** A refusal for whatever a step threw: ReviewError keeps its code, anything else is a panic, bounded. */
export function refusalOf(error: unknown): Refusal {
  if (error instanceof ReviewError) return { kind: 'failed', code: error.code, message: error.message };
  // An error's text may carry input: bounded like every other logged value.
  if (error instanceof Error) {
    return {
      kind: 'panic',
      message: boundMessage(error.message, LOG_MESSAGE_LIMIT),
      stack: boundMessage(error.stack ?? '', 4 * LOG_MESSAGE_LIMIT),
    };
  }
  return { kind: 'panic', message: boundMessage(String(error), LOG_MESSAGE_LIMIT), stack: '' };
}

/**
 * The decision for a review whose evaluation was stopped (it overran its deadline or its worker's
 * heap): once its envelope is known, a denial (or a failed conversion) that says why, in the review
 * the caller sent; before, a Status with `code`.
 */
export function stoppedDecision(envelope: ReviewEnvelope | undefined, code: number, message: string): Decided {
  if (envelope === undefined) return { kind: 'failed', code, message };
  const { uid, operation } = envelope;
  if (envelope.path === CONVERT_PATH) return conversionDecision(uid, conversionFailure(uid, message));
  const apiVersion = envelope.apiVersion as AdmissionApiVersion;
  return { kind: 'admission', apiVersion, uid, operation, response: errored(uid, code, message) };
}

/** A conversion's decision: the review encoded, and its failure message if it failed. */
export function conversionDecision(uid: string, review: ConversionReview): Decision {
  const result = review.response?.result;
  const failure = result?.status === 'Failure' ? (result.message ?? 'failed') : undefined;
  return { kind: 'conversion', uid, text: stringifyJson(review), ...(failure !== undefined && { failure }) };
}

export type ReviewOutcome = 'allowed' | 'denied' | 'patched' | 'error';

/** What the HTTP layer sends, counts and logs: `text` is the review to send back, encoded once. */
export type ReviewAnswer =
  | {
      kind: 'review';
      text: string;
      /** The review's uid, cut for the log. */
      uid: string;
      operation: string;
      outcome: ReviewOutcome;
      /** For a denial: the log line's code and message, cut. */
      log?: { code?: number; message: string };
    }
  | Refusal;

function outcomeOf(response: AdmissionResponse): ReviewOutcome {
  if (!response.allowed) return (response.status?.code ?? 403) >= 500 ? 'error' : 'denied';
  return response.patch ? 'patched' : 'allowed';
}

/** The answer to send: the review serialized once, with its outcome and, for a denial, its log line. */
export function encodeAnswer(decided: Decided): ReviewAnswer {
  if (decided.kind === 'failed' || decided.kind === 'panic') return decided;
  const uid = boundMessage(decided.uid, LOG_FIELD_LIMIT);
  if (decided.kind === 'conversion') {
    const { failure } = decided;
    return {
      kind: 'review',
      text: decided.text,
      uid,
      operation: 'CONVERT',
      outcome: failure === undefined ? 'allowed' : 'denied',
      ...(failure !== undefined && { log: { message: boundMessage(failure, LOG_MESSAGE_LIMIT) } }),
    };
  }
  const { response } = decided;
  return {
    kind: 'review',
    text: JSON.stringify(reviewResponse(decided.apiVersion, response)),
    uid,
    operation: decided.operation,
    outcome: outcomeOf(response),
    ...(!response.allowed && {
      log: {
        code: response.status?.code,
        message: boundMessage(response.status?.message ?? 'denied', LOG_MESSAGE_LIMIT),
      },
    }),
  };
}
