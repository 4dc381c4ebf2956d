import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { boundMessage, LOG_MESSAGE_LIMIT } from '../admission/bounds.ts';
import { reasonForCode } from '../admission/responses.ts';
import { type AdmissionRequest, type AdmissionResponse, ReviewError } from '../admission/review.ts';
import { DEFAULT_MAX_DEPTH, type ReviewAnswer, type ReviewPath, refusalOf } from '../review/codec.ts';
import { createReviewPipeline, type ReviewPipeline } from '../review/pipeline.ts';
import { AnswerBatch } from './answer-batch.ts';
import type { ReviewRecorder, WebhookMetrics } from './metrics.ts';
import { writeWholeAnswer } from './whole-answer.ts';

/** controller-runtime's limit (pkg/webhook/admission/http.go, maxRequestSize): 7 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 7 * 1024 * 1024;

export type AdmissionHandler = (request: AdmissionRequest) => AdmissionResponse;

interface ReviewEndpointSettings {
  metrics: WebhookMetrics;
  logger: Logger;
  maxBodyBytes?: number;
  /** Request-body bytes held by all requests together; past it a request is refused with 429. */
  maxInFlightBytes?: number;
}

/** The admission decisions as plain functions, run in this thread (a user's supertest suite). */
export interface InThreadReviewOptions extends ReviewEndpointSettings {
  mutate: AdmissionHandler;
  validate: AdmissionHandler;
  maxDepth?: number;
}

/** Reviews answered by the server's pipeline (review/pipeline.ts): isolation and cross-object steps included. */
export interface PipelineReviewOptions extends ReviewEndpointSettings {
  pipeline: ReviewPipeline;
}

export type ReviewEndpointOptions = InThreadReviewOptions | PipelineReviewOptions;

/** The pipeline for handlers passed in: decided in this thread, no cross-object step. */
function inThreadPipeline(options: InThreadReviewOptions): ReviewPipeline {
  const { mutate, validate } = options;
  return createReviewPipeline({
    decisions: { mutate, validate: (request) => ({ response: validate(request) }) },
    limits: { maxDepth: options.maxDepth ?? DEFAULT_MAX_DEPTH },
  });
}

/** One request to a review path, and the recorder of its metrics. */
interface ReviewCall {
  path: ReviewPath;
  req: IncomingMessage;
  res: ServerResponse;
  record: ReviewRecorder;
}

/** The review endpoints as one plain Node handler, shared by the Express app and the HTTPS server. */
export type ReviewEndpoint = (path: ReviewPath, req: IncomingMessage, res: ServerResponse) => void;

export function statusBody(code: number, message: string) {
  const reason = reasonForCode(code);
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    ...(reason !== undefined && { reason }),
    code,
  };
}

function sendText(res: ServerResponse, status: number, text: string): void {
  writeWholeAnswer(res, status, 'application/json', text);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendText(res, status, JSON.stringify(body));
}

/**
 * Reads the whole body, refusing more than `limit` bytes with 413 as soon as the declared length or
 * the bytes received pass it: the rest is never read (the answer closes the connection). Leaner than
 * body-parser on the hot path: no content-type negotiation (decodeJsonBody checks the type) and no
 * inflation (the API server does not compress webhook requests). A body that arrives in one chunk
 * (most do) is that chunk, neither copied nor allocated again; a larger one lands in one buffer of
 * its own, sized by Content-Length when there is one, so it is held once and a review worker can take
 * it over without a copy.
 */
function readBody(
  req: IncomingMessage,
  bounds: { limit: number; budget: ByteBudget; hold: { bytes: number } },
  done: (body: Buffer | ReviewError) => void,
) {
  const { limit, budget, hold } = bounds;
  const tooLarge = () => new ReviewError(413, `request entity is too large; limit is ${limit} bytes`);
  const busy = () =>
    new ReviewError(429, `the webhook holds ${budget.limit} bytes of request bodies already; retry later`);
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    done(tooLarge());
    return;
  }
  // Node's HTTP parser ends a message at its Content-Length, so no more than that can arrive: the
  // buffer is made at that size, and its bytes are taken from the budget before any arrive.
  const sized = Number.isSafeInteger(declared) && declared > 0;
  if (sized) {
    if (!budget.take(declared)) {
      done(busy());
      return;
    }
    hold.bytes += declared;
  }
  let whole: Buffer | undefined;
  let body: Buffer | undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const onData = (chunk: Buffer) => {
    if (sized && size + chunk.length <= declared) {
      if (size === 0 && chunk.length === declared) whole = chunk;
      else {
        body ??= Buffer.allocUnsafeSlow(declared);
        chunk.copy(body, size);
      }
      size += chunk.length;
      return;
    }
    if (!sized && size + chunk.length <= limit && budget.take(chunk.length)) {
      hold.bytes += chunk.length;
      chunks.push(chunk);
      size += chunk.length;
      return;
    }
    finished = true;
    chunks.length = 0;
    req.off('data', onData);
    req.pause();
    done(size + chunk.length > limit ? tooLarge() : busy());
  };
  req.on('data', onData);
  req.on('end', () => {
    if (finished) return;
    finished = true;
    if (whole) return done(whole);
    if (body) return done(size === body.length ? body : body.subarray(0, size));
    if (sized) return done(Buffer.alloc(0));
    const joined = Buffer.allocUnsafeSlow(size);
    let at = 0;
    for (const chunk of chunks) at += chunk.copy(joined, at);
    done(joined);
  });
  req.on('error', (error) => {
    if (finished) return;
    finished = true;
    done(new ReviewError(400, `cannot read the request body: ${error.message}`));
  });
}

/** Request-body bytes held by the requests in flight, against one limit for the process. */
export class ByteBudget {
  readonly limit: number;
  private used = 0;
  constructor(limit: number) {
    this.limit = limit;
  }
  fits(bytes: number): boolean {
    return this.used + bytes <= this.limit;
  }
  take(bytes: number): boolean {
    if (!this.fits(bytes)) return false;
    this.used += bytes;
    return true;
  }
  give(bytes: number): void {
    this.used -= bytes;
  }
}

/** How long a closing connection stays half-open, its answer sent, before it is destroyed. */
const LINGER_MS = 1_000;

/**
 * Answers and closes the connection, so an unread body (over the limit) is never read. Node's server
 * ends a connection it will not keep with `socket.destroySoon()`, which destroys the socket as soon as
 * the answer is written; with unread input in the kernel's buffers that sends a reset, and a reset
 * that reaches the client before it reads the answer destroys the answer. So this connection closes
 * as Go's server closes one (`closeWriteAndWait`): it stops reading, half-closes, and is destroyed
 * only after LINGER_MS. The client's writes stall once the buffers are full; a client that reads while
 * it writes (Go's, Node's, curl) reads the answer meanwhile.
 */
function sendAndClose(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  res.shouldKeepAlive = false;
  res.setHeader('connection', 'close');
  const socket = req.socket;
  socket.destroySoon = () => {
    socket.pause();
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
  sendJson(res, status, body);
}

/**
 * POST /mutate, /validate and /convert: body limit, content type, decoding, status codes, metrics
 * and logs. The admission decisions are plain functions passed in. Every failure is answered here
 * (4xx with a message naming the problem, or 500 plus a metric), so no error escapes to a framework.
 */
export function createReviewEndpoint(options: ReviewEndpointOptions): ReviewEndpoint {
  const { metrics, logger } = options;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const budget = new ByteBudget(options.maxInFlightBytes ?? 2 * maxBodyBytes);
  const pipeline = 'pipeline' in options ? options.pipeline : inThreadPipeline(options);
  const answers = new AnswerBatch((error) => {
    metrics.panics.inc({ path: 'other' });
    logger.error(
      { err: error instanceof Error ? { message: error.message, stack: error.stack } : String(error) },
      'writing an answer failed',
    );
  });

  /** A request refused with a Status (4xx, or 500 after a panic). */
  const fail = (request: ReviewCall, code: number, message: string) => {
    const { path, req, res } = request;
    if (code < 500) logger.info({ path, code }, boundMessage(message, LOG_MESSAGE_LIMIT));
    answers.add(res, () => {
      if (code === 413 || code === 429) sendAndClose(req, res, code, statusBody(code, message));
      else sendJson(res, code, statusBody(code, message));
      request.record({ code, operation: '', outcome: code >= 500 ? 'error' : 'bad_request' });
    });
  };

  const send = (request: ReviewCall, answer: ReviewAnswer) => {
    const { path, res } = request;
    if (answer.kind === 'failed') return fail(request, answer.code, answer.message);
    if (answer.kind === 'panic') {
      metrics.panics.inc({ path });
      logger.error({ path, err: { message: answer.message, stack: answer.stack } }, 'handler failed');
      return fail(request, 500, 'internal error while handling the review; see the webhook log');
    }
    const { uid, operation, outcome } = answer;
    if (answer.log) logger.info({ uid, path, operation, code: answer.log.code }, answer.log.message);
    else if (logger.isLevelEnabled('debug')) logger.debug({ uid, path, operation, outcome }, 'admitted');
    answers.add(res, () => {
      sendText(res, 200, answer.text);
      request.record({ code: 200, operation, outcome });
    });
  };

  return (path, req, res) => {
    const request: ReviewCall = { path, req, res, record: metrics.startReview(path) };
    // Given back when the answer is out, whatever happened: the bytes are garbage by then.
    const hold = { bytes: 0 };
    res.once('close', () => budget.give(hold.bytes));
    readBody(req, { limit: maxBodyBytes, budget, hold }, (body) => {
      if (body instanceof ReviewError) return fail(request, body.code, body.message);
      let answered: ReviewAnswer | Promise<ReviewAnswer>;
      try {
        answered = pipeline({ path, contentType: req.headers['content-type'], body });
      } catch (error) {
        answered = refusalOf(error);
      }
      if (answered instanceof Promise) {
        answered.then(
          (answer) => send(request, answer),
          (error) => send(request, refusalOf(error)),
        );
      } else send(request, answered);
    });
  };
}
