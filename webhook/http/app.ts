import express, { type NextFunction, type Request, type Response } from 'express';
import { Probes } from '../../observability/probes-server.ts';
import { PROBE_PATHS, sendNoRoute, sendPanic, type WebhookAppOptions } from './listener.ts';
import { createReviewEndpoint, REVIEW_PATHS, type ReviewEndpoint } from './review-endpoints.ts';

export { createWebhookListener, type Readiness, type WebhookAppOptions } from './listener.ts';
export type { AdmissionHandler } from './review-endpoints.ts';

function expressApp(options: WebhookAppOptions, review: ReviewEndpoint): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  for (const path of REVIEW_PATHS) app.post(path, (req, res) => review(path, req, res));

  // The same answers as the probes port (observability/probes-server.ts): Kubernetes' healthz format.
  const probes = new Probes({ ready: options.readiness }, options.logger);
  app.get([...PROBE_PATHS], (req, res, next) => {
    const answer = probes.answer(req.originalUrl);
    if (answer) res.status(answer.status).set(answer.headers).send(answer.body);
    else next(); // `/readyz/` or `/READYZ`: Express matched, the probes do not
  });

  app.use((req: Request, res: Response) => sendNoRoute(res, req.method, req.path));

  // The review endpoint answers its own failures; this catches what escapes the probes or Express.
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) =>
    sendPanic(options, res, req.path, error),
  );
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
