import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
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
import { rawBody } from './raw-body.ts';

export type AdmissionHandler = (request: AdmissionRequest) => AdmissionResponse;

export interface Readiness {
  ready: boolean;
  /** What is missing (not ready) or what is off (ready, but degraded: for example the cross-object rule). */
  notes: string[];
}

export interface WebhookAppOptions {
  mutate: AdmissionHandler;
  validate: AdmissionHandler;
  metrics: WebhookMetrics;
  logger: Logger;
  readiness?: () => Readiness;
  maxBodyBytes?: number;
  maxDepth?: number;
}

function statusBody(code: number, message: string) {
  const reason =
    code === 413
      ? 'RequestEntityTooLarge'
      : code === 415
        ? 'UnsupportedMediaType'
        : code >= 500
          ? 'InternalError'
          : 'BadRequest';
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

/** JSON without Express's content negotiation: the hot path answers thousands of reviews a second. */
function sendJson(res: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

function outcomeOf(response: AdmissionResponse): string {
  if (!response.allowed) return (response.status?.code ?? 403) >= 500 ? 'error' : 'denied';
  return response.patch ? 'patched' : 'allowed';
}

/**
 * The webhook's Express app: HTTP concerns only (body limit, content type, decoding, status codes,
 * metrics, logs). The admission decisions are plain functions passed in, so a user's supertest
 * suite can drive this app in-process with AdmissionReview JSON.
 */
export function createWebhookApp(options: WebhookAppOptions): express.Express {
  const { metrics, logger } = options;
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  const body = rawBody(maxBodyBytes);

  const admission = (path: string, handler: AdmissionHandler) => (req: Request, res: Response) => {
    const { apiVersion, request } = parseAdmissionReview(decodeJsonBody(req.get('content-type'), req.body, maxDepth));
    const response = handler(request);
    const outcome = outcomeOf(response);
    metrics.requests.inc({ path, operation: request.operation, outcome });
    if (!response.allowed) {
      logger.info(
        { uid: request.uid, path, operation: request.operation, code: response.status?.code },
        response.status?.message ?? 'denied',
      );
    } else {
      logger.debug({ uid: request.uid, path, operation: request.operation, outcome }, 'admitted');
    }
    sendJson(res, 200, reviewResponse(apiVersion, response));
  };

  const timed = (path: string, handle: (req: Request, res: Response) => void) => (req: Request, res: Response) => {
    const end = metrics.duration.startTimer({ path });
    metrics.inFlight.inc();
    res.on('close', () => {
      metrics.inFlight.dec();
      end();
    });
    handle(req, res);
  };

  app.post('/mutate', body, timed('/mutate', admission('/mutate', options.mutate)));
  app.post('/validate', body, timed('/validate', admission('/validate', options.validate)));
  app.post(
    '/convert',
    body,
    timed('/convert', (req, res) => {
      const request = parseConversionReview(decodeJsonBody(req.get('content-type'), req.body, maxDepth));
      const review = convertReview(request);
      const failed = review.response?.result.status === 'Failure';
      metrics.requests.inc({ path: '/convert', operation: 'CONVERT', outcome: failed ? 'denied' : 'allowed' });
      if (failed)
        logger.info({ uid: request.uid, path: '/convert' }, review.response?.result.message ?? 'conversion failed');
      sendJson(res, 200, review);
    }),
  );

  app.get('/healthz', (_req, res) => {
    res.type('text/plain').send('ok');
  });
  app.get('/readyz', (_req, res) => {
    const readiness = options.readiness?.() ?? { ready: true, notes: [] };
    res
      .status(readiness.ready ? 200 : 503)
      .type('text/plain')
      .send([readiness.ready ? 'ok' : 'not ready', ...readiness.notes].join('\n'));
  });

  app.use((req: Request, res: Response) => {
    res
      .status(404)
      .json(statusBody(404, `no route for ${req.method} ${req.path}: use POST /mutate, /validate or /convert`));
  });

  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const path = req.path;
    const err = error as { type?: string; status?: number; message?: string };
    let code: number;
    let message: string;
    if (error instanceof ReviewError) {
      code = error.code;
      message = error.message;
    } else if (err.type === 'entity.too.large') {
      code = 413;
      message = `request entity is too large; limit is ${maxBodyBytes} bytes`;
    } else if (typeof err.status === 'number' && err.status >= 400 && err.status < 500) {
      code = err.status;
      message = `cannot read the request body: ${err.message ?? 'bad request'}`;
    } else {
      code = 500;
      message = 'internal error while handling the review; see the webhook log';
      metrics.panics.inc({ path });
      logger.error(
        { path, err: error instanceof Error ? { message: error.message, stack: error.stack } : String(error) },
        'handler failed',
      );
    }
    metrics.requests.inc({ path, operation: '', outcome: code >= 500 ? 'error' : 'bad_request' });
    if (code < 500) logger.info({ path, code }, message);
    res.status(code).json(statusBody(code, message));
  });

  return app;
}
