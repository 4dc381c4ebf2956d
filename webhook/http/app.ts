import express, { type NextFunction, type Request, type Response } from 'express';
import { createWebhookListener, sendPanic, type WebhookAppOptions } from './listener.ts';

export { createWebhookListener, type Readiness, type WebhookAppOptions } from './listener.ts';
export type { AdmissionHandler } from './review-endpoint.ts';

/**
 * The webhook as an Express app, for users who embed it or drive it with supertest: a thin adapter
 * over the request listener the HTTPS server runs (listener.ts), so both answer every request the
 * same way — POST /mutate, /validate and /convert, /healthz, /readyz, and a 404 naming the routes.
 * The admission decisions are plain functions passed in.
 */
export function createWebhookApp(options: WebhookAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const listener = createWebhookListener(options);
  app.use((req: Request, res: Response) => listener(req, res));
  // The listener answers its own failures; this catches what could escape Express itself.
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) =>
    sendPanic(options, res, req.path, error),
  );
  return app;
}
