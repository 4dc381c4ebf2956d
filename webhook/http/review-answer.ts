import { CONVERT_PATH, MUTATE_PATH, VALIDATE_PATH } from '../../api/constants.ts';
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
import { type ShardRequest, shardRequestOf } from '../admission/shard-label.ts';
import type { HostnameClaim, SchemaVerdict } from '../admission/validate.ts';
import { conversionFailure, convertReview, parseConversionReview } from '../conversion/convert.ts';
import { DEFAULT_MAX_DEPTH, decodeJsonBody } from './json-body.ts';

/** The paths the webhook configurations and the CRD's conversion stanza call (api/constants.ts). */
export const REVIEW_PATHS = [MUTATE_PATH, VALIDATE_PATH, CONVERT_PATH] as const;
export type ReviewPath = (typeof REVIEW_PATHS)[number];

/** One request body to answer, as the HTTP layer read it. */
export interface ReviewTask {
  path: ReviewPath;
  contentType: string | undefined;
  body: Uint8Array;
}

export type ReviewOutcome = 'allowed' | 'denied' | 'patched' | 'error';

/** A claim with what it takes to deny the review in the caller's words, should the hostname be taken. */
export interface AnsweredClaim extends HostnameClaim {
  apiVersion: AdmissionApiVersion;
  response: AdmissionResponse;
}

/** A shard request with what it takes to answer the review again with the label added. */
export interface AnsweredShardRequest extends ShardRequest {
  apiVersion: AdmissionApiVersion;
  response: AdmissionResponse;
}

/**
 * What a review came to: plain data, so a worker thread can hand it over. `text` is the review to
 * send back; `log` the line to log for a denial, its fields already bounded.
 */
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
      claim?: AnsweredClaim;
      /** A mutated StaticSite without a shard label: labelled by the caller when the controllers are sharded. */
      shard?: AnsweredShardRequest;
    }
  /** The request could not be read as a review (ReviewError): a 4xx with a Status. */
  | { kind: 'failed'; code: number; message: string }
  /** An exception: a 500, a panic counted, the error logged (bounded). */
  | { kind: 'panic'; message: string; stack: string };

/** The review's envelope, known once it parsed: enough to answer it if its evaluation never ends. */
export interface ReviewEnvelope {
  path: ReviewPath;
  apiVersion: string;
  uid: string;
  operation: string;
}

/** The admission decisions in the form the answer needs; the validator's claim is judged by the caller. */
export interface ReviewHandlers {
  mutate: (request: AdmissionRequest) => AdmissionResponse;
  validate: (request: AdmissionRequest) => SchemaVerdict;
}

export interface ReviewLimits {
  maxDepth?: number;
  maxValues?: number;
}

function outcomeOf(response: AdmissionResponse): ReviewOutcome {
  if (!response.allowed) return (response.status?.code ?? 403) >= 500 ? 'error' : 'denied';
  return response.patch ? 'patched' : 'allowed';
}

function denialLog(response: AdmissionResponse) {
  if (response.allowed) return undefined;
  return {
    code: response.status?.code,
    message: boundMessage(response.status?.message ?? 'denied', LOG_MESSAGE_LIMIT),
  };
}

/** The answer to an admission review with this response. */
export function admissionAnswer(
  apiVersion: AdmissionApiVersion,
  request: { uid: string; operation: string },
  response: AdmissionResponse,
  claim?: HostnameClaim,
  shard?: ShardRequest,
): ReviewAnswer {
  return {
    kind: 'review',
    text: JSON.stringify(reviewResponse(apiVersion, response)),
    uid: boundMessage(request.uid, LOG_FIELD_LIMIT),
    operation: request.operation,
    outcome: outcomeOf(response),
    log: denialLog(response),
    ...(claim && { claim: { ...claim, apiVersion, response } }),
    ...(shard && { shard: { ...shard, apiVersion, response } }),
  };
}

function admission(
  handlers: ReviewHandlers,
  task: ReviewTask,
  limits: ReviewLimits,
  parsed: (envelope: ReviewEnvelope) => void,
): ReviewAnswer {
  const decoded = decodeJsonBody(task.contentType, task.body, limits.maxDepth ?? DEFAULT_MAX_DEPTH, limits);
  const { apiVersion, request } = parseAdmissionReview(decoded);
  parsed({ path: task.path, apiVersion, uid: request.uid, operation: request.operation });
  if (task.path === MUTATE_PATH) {
    const response = handlers.mutate(request);
    return admissionAnswer(apiVersion, request, response, undefined, shardRequestOf(request, response));
  }
  const { response, claim } = handlers.validate(request);
  return admissionAnswer(apiVersion, request, response, claim);
}

function conversion(task: ReviewTask, limits: ReviewLimits, parsed: (envelope: ReviewEnvelope) => void): ReviewAnswer {
  // Conversion passes every field it does not know through: numbers must come back digit for digit.
  const decoded = decodeJsonBody(task.contentType, task.body, limits.maxDepth ?? DEFAULT_MAX_DEPTH, {
    ...limits,
    exactIntegers: true,
  });
  const request = parseConversionReview(decoded);
  parsed({ path: CONVERT_PATH, apiVersion: 'apiextensions.k8s.io/v1', uid: request.uid, operation: 'CONVERT' });
  const review = convertReview(request);
  const failed = review.response?.result.status === 'Failure';
  return {
    kind: 'review',
    text: JSON.stringify(review),
    uid: boundMessage(request.uid, LOG_FIELD_LIMIT),
    operation: 'CONVERT',
    outcome: failed ? 'denied' : 'allowed',
    ...(failed && { log: { message: boundMessage(review.response?.result.message ?? 'failed', LOG_MESSAGE_LIMIT) } }),
  };
}

/**
 * Decodes a review body and answers it: the whole job of one request after its bytes arrived,
 * in plain data, whether it runs in this thread or in a review worker. `parsed` hears the
 * envelope as soon as it is known. Never throws.
 */
export function answerReview(
  handlers: ReviewHandlers,
  task: ReviewTask,
  limits: ReviewLimits = {},
  parsed: (envelope: ReviewEnvelope) => void = () => {},
): ReviewAnswer {
  try {
    return task.path === CONVERT_PATH ? conversion(task, limits, parsed) : admission(handlers, task, limits, parsed);
  } catch (error) {
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
}

/**
 * The answer to a review whose evaluation was stopped (it overran its deadline or its worker's
 * heap): once its envelope is known, a denial (or a failed conversion) that says why, in the review
 * the caller sent; before, a Status with `code`.
 */
export function stoppedAnswer(envelope: ReviewEnvelope | undefined, code: number, message: string): ReviewAnswer {
  if (envelope === undefined) return { kind: 'failed', code, message };
  if (envelope.path === CONVERT_PATH) {
    return {
      kind: 'review',
      text: JSON.stringify(conversionFailure(envelope.uid, message)),
      uid: boundMessage(envelope.uid, LOG_FIELD_LIMIT),
      operation: 'CONVERT',
      outcome: 'denied',
      log: { code, message },
    };
  }
  const apiVersion = envelope.apiVersion as AdmissionApiVersion;
  return admissionAnswer(apiVersion, envelope, errored(envelope.uid, code, message));
}
