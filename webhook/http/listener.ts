import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Check } from '../../observability/probes-server.ts';
import { Probes } from '../../observability/probes-server.ts';
import { REVIEW_PATHS, type ReviewPath } from '../review/codec.ts';
import { createReviewEndpoint, type ReviewEndpointOptions, sendJson, statusBody } from './review-endpoint.ts';

/**
 * The webhook's readiness: named checks, each ok or failing with a reason, and with a public note
 * for what is missing or off (for example the cross-object rule). See observability/probes-server.ts.
 */
export type Readiness = readonly Check[];

export type WebhookAppOptions = ReviewEndpointOptions & {
  readiness?: Readiness;
  /**
   * Serve only these review paths, and no probes: for a port one kind of caller reaches (the
   * conversion port of `webhook --client-ca`, which serves `/convert` alone). Anything else there is
   * a 404 naming what the port serves. Default: every review path and the probes.
   */
  routes?: readonly ReviewPath[];
};

export const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

/** How a 404 names the review paths a listener serves: `POST /mutate, /validate or /convert`. */
export function routeList(paths: readonly string[]): string {
  const last = paths.at(-1) ?? '';
  return `POST ${paths.length > 1 ? `${paths.slice(0, -1).join(', ')} or ${last}` : last}`;
}

/** The answer to a path the webhook does not serve, naming the ones it does. */
export function sendNoRoute(
  res: ServerResponse,
  request: { method: string; path: string },
  served: readonly string[] = REVIEW_PATHS,
): void {
  const { method, path } = request;
  sendJson(res, 404, statusBody(404, `no route for ${method} ${path}: use ${routeList(served)}`));
}

/** A failure that escaped the handlers: counted, logged, and answered without its text. */
export function sendPanic(options: WebhookAppOptions, res: ServerResponse, requestPath: string, error: unknown): void {
  const path = PROBE_PATHS.has(requestPath) ? requestPath : 'other'; // a bounded label, whatever the URL
  options.metrics.panics.inc({ path });
  options.logger.error(
    { path, err: error instanceof Error ? { message: error.message, stack: error.stack } : String(error) },
    'handler failed',
  );
  if (!res.headersSent) {
    sendJson(res, 500, statusBody(500, 'internal error while handling the request; see the webhook log'));
  }
}

/** Paths match case-insensitively and with an optional trailing slash, as Express routes them. */
const routeKey = (path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).toLowerCase();

/**
 * The webhook's one front door, run by the HTTPS server and wrapped by the Express app (app.ts):
 * `POST /mutate`, `/validate` and `/convert` (with or without the API server's `?timeout=` query)
 * go to the review endpoint, `GET`/`HEAD /healthz` and `/readyz` to the probes, anything else is a
 * 404 naming the routes. With `routes`, only those review paths are served and the probes are not.
 */
export function createWebhookListener(options: WebhookAppOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const served = options.routes ?? REVIEW_PATHS;
  const routes: ReadonlyMap<string, ReviewPath> = new Map(served.map((path) => [path, path]));
  const review = createReviewEndpoint(options);
  const probes = options.routes ? undefined : new Probes({ ready: options.readiness }, options.logger);
  return (req, res) => {
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const method = req.method ?? '';
    const reviewPath = method === 'POST' ? routes.get(routeKey(path)) : undefined;
    if (reviewPath) {
      review(reviewPath, req, res);
      return;
    }
    try {
      const answer = probes && (method === 'GET' || method === 'HEAD') ? probes.answer(url) : undefined;
      if (answer) {
        res
          .writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body) })
          .end(answer.body);
        return;
      }
    } catch (error) {
      sendPanic(options, res, path, error);
      return;
    }
    req.resume();
    sendNoRoute(res, { method, path }, served);
  };
}
