import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import {
  createReviewEndpoint,
  REVIEW_PATHS,
  type ReviewEndpoint,
  type ReviewEndpointOptions,
  type ReviewPath,
  sendJson,
  statusBody,
} from './review-endpoints.ts';

export type { AdmissionHandler } from './review-endpoints.ts';

export interface Readiness {
  ready: boolean;
  /** What is missing (not ready) or what is off (ready, but degraded: for example the cross-object rule). */
  notes: string[];
}

export interface WebhookAppOptions extends ReviewEndpointOptions {
  readiness?: () => Readiness;
}

const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

function expressApp(options: WebhookAppOptions, review: ReviewEndpoint): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  for (const path of REVIEW_PATHS) app.post(path, (req, res) => review(path, req, res));

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
    sendJson(
      res,
      404,
      statusBody(404, `no route for ${req.method} ${req.path}: use POST /mutate, /validate or /convert`),
    );
  });

  // The review endpoint answers its own failures; this catches what escapes the probes or Express.
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const path = PROBE_PATHS.has(req.path) ? req.path : 'other'; // a bounded label, whatever the URL
    options.metrics.panics.inc({ path });
    options.logger.error(
      { path, err: error instanceof Error ? { message: error.message, stack: error.stack } : String(error) },
      'handler failed',
    );
    sendJson(res, 500, statusBody(500, 'internal error while handling the request; see the webhook log'));
  });
  return app;
}

/**
 * The webhook's Express app: POST /mutate, /validate and /convert, /healthz, /readyz, and a 404 that
 * names the routes. The admission decisions are plain functions passed in, so a user's supertest
 * suite can drive this app in-process with AdmissionReview JSON.
 */
export function createWebhookApp(options: WebhookAppOptions): express.Express {
  return expressApp(options, createReviewEndpoint(options));
}

const FAST_PATHS: ReadonlyMap<string, ReviewPath> = new Map(REVIEW_PATHS.map((path) => [path, path]));

/**
 * The request listener the HTTPS server runs: the same Express app, except that `POST /mutate`,
 * `/validate` and `/convert` (what the API server calls, with or without its `?timeout=` query) go
 * straight to the shared review endpoint. Under load Express's per-request setup cost about a fifth
 * of a review's CPU (bench/RESULTS.md), and the API server waits on every write for this answer.
 */
export function createWebhookListener(options: WebhookAppOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const review = createReviewEndpoint(options);
  const app = expressApp(options, review);
  return (req, res) => {
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const path = req.method === 'POST' ? FAST_PATHS.get(query === -1 ? url : url.slice(0, query)) : undefined;
    if (path) review(path, req, res);
    else app(req, res);
  };
}
