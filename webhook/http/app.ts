import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { type Check, Probes } from '../../kube/probes-server.ts';
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

/**
 * The webhook's readiness: named checks, each ok or failing with a reason, and with a public note
 * for what is missing or off (for example the cross-object rule). See kube/probes-server.ts.
 */
export type Readiness = readonly Check[];

export interface WebhookAppOptions extends ReviewEndpointOptions {
  readiness?: Readiness;
}

const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

function expressApp(options: WebhookAppOptions, review: ReviewEndpoint): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  for (const path of REVIEW_PATHS) app.post(path, (req, res) => review(path, req, res));

  // The same answers as the probes port (kube/probes-server.ts): Kubernetes' healthz format.
  const probes = new Probes({ ready: options.readiness }, options.logger);
  app.get([...PROBE_PATHS], (req, res, next) => {
    const answer = probes.answer(req.originalUrl);
    if (answer) res.status(answer.status).set(answer.headers).send(answer.body);
    else next(); // `/readyz/` or `/READYZ`: Express matched, the probes do not
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
