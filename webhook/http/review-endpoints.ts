import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { boundMessage, LOG_FIELD_LIMIT, LOG_MESSAGE_LIMIT } from '../admission/bounds.ts';
import {
  type AdmissionRequest,
  type AdmissionResponse,
  parseAdmissionReview,
  ReviewError,
  reviewResponse,
} from '../admission/review.ts';
import { convertReview, parseConversionReview } from '../conversion/convert.ts';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_DEPTH, decodeJsonBody } from './json-body.ts';
import type { WebhookMetrics } from './metrics.ts';

export type AdmissionHandler = (request: AdmissionRequest) => AdmissionResponse;

export const REVIEW_PATHS = ['/mutate', '/validate', '/convert'] as const;
export type ReviewPath = (typeof REVIEW_PATHS)[number];

export interface ReviewEndpointOptions {
  mutate: AdmissionHandler;
  validate: AdmissionHandler;
  metrics: WebhookMetrics;
  logger: Logger;
  maxBodyBytes?: number;
  /** Request-body bytes held by all requests together; past it a request is refused with 429. */
  maxInFlightBytes?: number;
  maxDepth?: number;
}

/** The review endpoints as one plain Node handler, shared by the Express app and the HTTPS server. */
export type ReviewEndpoint = (path: ReviewPath, req: IncomingMessage, res: ServerResponse) => void;

export function statusBody(code: number, message: string) {
  const reason =
    code === 413
      ? 'RequestEntityTooLarge'
      : code === 429
        ? 'TooManyRequests'
        : code === 415
          ? 'UnsupportedMediaType'
          : code === 404
            ? 'NotFound'
            : code >= 500
              ? 'InternalError'
              : 'BadRequest';
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

function outcomeOf(response: AdmissionResponse): string {
  if (!response.allowed) return (response.status?.code ?? 403) >= 500 ? 'error' : 'denied';
  return response.patch ? 'patched' : 'allowed';
}

/**
 * Reads the whole body, refusing more than `limit` bytes with 413 as soon as the declared length or
 * the bytes received pass it: the rest is never read (the answer closes the connection). Leaner than
 * body-parser on the hot path: no content-type negotiation (decodeJsonBody checks the type) and no
 * inflation (the API server does not compress webhook requests).
 */
function readBody(
  req: IncomingMessage,
  limit: number,
  budget: ByteBudget,
  hold: { bytes: number },
  done: (body: Buffer | ReviewError) => void,
) {
  const tooLarge = () => new ReviewError(413, `request entity is too large; limit is ${limit} bytes`);
  const busy = () =>
    new ReviewError(429, `the webhook holds ${budget.limit} bytes of request bodies already; retry later`);
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    done(tooLarge());
    return;
  }
  if (declared > 0 && !budget.fits(declared)) {
    done(busy());
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size <= limit && budget.take(chunk.length)) {
      hold.bytes += chunk.length;
      chunks.push(chunk);
      return;
    }
    finished = true;
    chunks.length = 0;
    req.off('data', onData);
    req.pause();
    done(size > limit ? tooLarge() : busy());
  };
  req.on('data', onData);
  req.on('end', () => {
    if (finished) return;
    finished = true;
    done(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
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
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const budget = new ByteBudget(options.maxInFlightBytes ?? 2 * maxBodyBytes);

  const admit = (path: ReviewPath, handler: AdmissionHandler, contentType: string | undefined, body: Buffer) => {
    const { apiVersion, request } = parseAdmissionReview(decodeJsonBody(contentType, body, maxDepth));
    const response = handler(request);
    const outcome = outcomeOf(response);
    metrics.requests.inc({ path, operation: request.operation, outcome });
    if (!response.allowed) {
      logger.info(
        {
          uid: boundMessage(request.uid, LOG_FIELD_LIMIT),
          path,
          operation: request.operation,
          code: response.status?.code,
        },
        boundMessage(response.status?.message ?? 'denied', LOG_MESSAGE_LIMIT),
      );
    } else if (logger.isLevelEnabled('debug')) {
      logger.debug(
        { uid: boundMessage(request.uid, LOG_FIELD_LIMIT), path, operation: request.operation, outcome },
        'admitted',
      );
    }
    return reviewResponse(apiVersion, response);
  };

  const convert = (contentType: string | undefined, body: Buffer) => {
    // Conversion passes every field it does not know through: numbers must come back digit for digit.
    const request = parseConversionReview(decodeJsonBody(contentType, body, maxDepth, { exactIntegers: true }));
    const review = convertReview(request);
    const failed = review.response?.result.status === 'Failure';
    metrics.requests.inc({ path: '/convert', operation: 'CONVERT', outcome: failed ? 'denied' : 'allowed' });
    if (failed) {
      logger.info(
        { uid: boundMessage(String(request.uid), LOG_FIELD_LIMIT), path: '/convert' },
        boundMessage(review.response?.result.message ?? 'failed', LOG_MESSAGE_LIMIT),
      );
    }
    return review;
  };

  const answer = (path: ReviewPath, contentType: string | undefined, body: Buffer) =>
    path === '/convert'
      ? convert(contentType, body)
      : admit(path, path === '/mutate' ? options.mutate : options.validate, contentType, body);

  const fail = (path: ReviewPath, req: IncomingMessage, res: ServerResponse, error: unknown) => {
    let code: number;
    let message: string;
    if (error instanceof ReviewError) {
      code = error.code;
      message = error.message;
    } else {
      code = 500;
      message = 'internal error while handling the review; see the webhook log';
      metrics.panics.inc({ path });
      // An error's text may carry input: bounded like every other logged value.
      const err =
        error instanceof Error
          ? {
              message: boundMessage(error.message, LOG_MESSAGE_LIMIT),
              stack: boundMessage(error.stack ?? '', 4 * LOG_MESSAGE_LIMIT),
            }
          : boundMessage(String(error), LOG_MESSAGE_LIMIT);
      logger.error({ path, err }, 'handler failed');
    }
    metrics.requests.inc({ path, operation: '', outcome: code >= 500 ? 'error' : 'bad_request' });
    if (code < 500) logger.info({ path, code }, boundMessage(message, LOG_MESSAGE_LIMIT));
    if (code === 413 || code === 429) sendAndClose(req, res, code, statusBody(code, message));
    else sendJson(res, code, statusBody(code, message));
  };

  const pathLabels: Record<ReviewPath, { path: ReviewPath }> = {
    '/mutate': { path: '/mutate' },
    '/validate': { path: '/validate' },
    '/convert': { path: '/convert' },
  };
  const webhookLabels: Record<ReviewPath, { webhook: ReviewPath }> = {
    '/mutate': { webhook: '/mutate' },
    '/validate': { webhook: '/validate' },
    '/convert': { webhook: '/convert' },
  };

  return (path, req, res) => {
    const received = performance.now();
    metrics.inFlight.inc();
    metrics.runtimeInFlight.inc(webhookLabels[path]);
    // Given back when the answer is out, whatever happened: the bytes are garbage by then.
    const hold = { bytes: 0 };
    res.once('close', () => {
      budget.give(hold.bytes);
      const seconds = (performance.now() - received) / 1000;
      metrics.inFlight.dec();
      metrics.duration.observe(pathLabels[path], seconds);
      metrics.runtimeInFlight.dec(webhookLabels[path]);
      metrics.runtimeLatency.observe(webhookLabels[path], seconds);
      metrics.runtimeRequests.inc({ webhook: path, code: String(res.statusCode) });
    });
    readBody(req, maxBodyBytes, budget, hold, (body) => {
      if (body instanceof ReviewError) return fail(path, req, res, body);
      let review: unknown;
      try {
        review = answer(path, req.headers['content-type'], body);
      } catch (thrown) {
        return fail(path, req, res, thrown);
      }
      sendJson(res, 200, review);
    });
  };
}
