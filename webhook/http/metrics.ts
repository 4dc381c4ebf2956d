import { CONTROLLER_RUNTIME_BUCKETS } from '../../observability/metric-buckets.ts';
import { counter, gauge, histogram, metricsClass } from '../../observability/metric-declarations.ts';
import { REVIEW_PATHS, type ReviewOutcome, type ReviewPath } from '../review/codec.ts';
import { HANDSHAKE_FAILURE_REASONS } from '../tls/handshake-failures.ts';
import { RECLAIM_REASONS } from './connection-fairness.ts';

/** How a request to a review path ended: its HTTP code and, for our own counter, what it came to. */
export interface ReviewEnd {
  code: number;
  /** The review's operation; empty when the request was refused before one was read. */
  operation: string;
  /** A review's outcome, or `bad_request` / `error` for a request answered with a 4xx / 5xx Status. */
  outcome: ReviewOutcome | 'bad_request';
}

/** Records one request to a review path: called once, when its answer is written. */
export type ReviewRecorder = (end: ReviewEnd) => void;

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/**
 * The webhook's metrics, one a line: ours, and controller-runtime's webhook metrics
 * (pkg/webhook/internal/metrics/metrics.go: names, help texts, labels and buckets), whose `webhook`
 * is the path and `code` the HTTP status written.
 */
// biome-ignore format: a table, one metric a line
const METRICS = {
  requests: counter('staticsite_webhook_requests_total', 'Webhook requests by path, operation and outcome (allowed, denied, patched, error, bad_request).', ['path', 'operation', 'outcome']),
  duration: histogram('staticsite_webhook_request_duration_seconds', 'Time from request received to response written.', ['path'], DURATION_BUCKETS),
  panics: counter('staticsite_webhook_handler_panics_total', 'Unexpected exceptions in a handler, answered with 500.', ['path']),
  certExpiry: gauge('staticsite_webhook_certificate_expiry_timestamp_seconds', 'notAfter of the serving certificate in use, as a Unix timestamp.'),
  runtimeRequests: counter('controller_runtime_webhook_requests_total', 'Total number of admission requests by HTTP status code.', ['webhook', 'code']),
  runtimeLatency: histogram('controller_runtime_webhook_latency_seconds', 'Histogram of the latency of processing admission requests', ['webhook'], CONTROLLER_RUNTIME_BUCKETS),
  runtimeInFlight: gauge('controller_runtime_webhook_requests_in_flight', 'Current number of admission requests being served.', ['webhook']),
  workersReplaced: counter('staticsite_webhook_review_workers_replaced_total', 'Review workers replaced: after a review overran its deadline, ran out of its heap, or the worker exited.', ['reason']),
  reviewsPlaced: counter('staticsite_webhook_reviews_placed_total', 'Reviews by the thread that decided them: main (within the in-thread bounds) or worker (isolated).', ['thread']),
  reviewQueueLength: gauge('staticsite_webhook_review_queue_length', 'Reviews waiting for a free review worker.'),
  certReloads: counter('staticsite_webhook_certificate_reloads_total', 'Serving certificates loaded from the cert dir after start.'),
  connectionsReclaimed: counter('staticsite_webhook_connections_reclaimed_total', 'Connections closed by the fairness rule: near the cap idle keep-alive (idle), TLS handshake unfinished (handshake), request headers unfinished (headers); over the per-address limit (per-client).', ['reason']),
  handshakeFailures: counter('staticsite_webhook_tls_handshake_failures_total', 'TLS handshakes that failed: no-client-certificate, bad-certificate, timeout, protocol (not TLS, old version, no shared cipher), closed (by the client or the fairness rule before the end), other.', ['reason']),
};

/** The webhook's Prometheus metrics, on a registry of their own (no global state). */
export class WebhookMetrics extends metricsClass(METRICS) {
  constructor() {
    super();
    // As controller-runtime's InstrumentedHook: the 200 and 500 series exist from the start.
    for (const webhook of REVIEW_PATHS) {
      for (const code of ['200', '500']) this.runtimeRequests.inc({ webhook, code }, 0);
      this.runtimeInFlight.set({ webhook }, 0);
    }
    for (const reason of ['deadline', 'memory', 'exit']) this.workersReplaced.inc({ reason }, 0);
    for (const thread of ['main', 'worker']) this.reviewsPlaced.inc({ thread }, 0);
    for (const reason of RECLAIM_REASONS) this.connectionsReclaimed.inc({ reason }, 0);
    for (const reason of HANDSHAKE_FAILURE_REASONS) this.handshakeFailures.inc({ reason }, 0);
  }

  /**
   * A request to `path` has arrived: it is in flight until the recorder returned is called with
   * how it ended, which counts it and its latency in both families (ours and controller-runtime's).
   * The one place a review is recorded; a second call of the recorder is ignored.
   */
  startReview(path: ReviewPath): ReviewRecorder {
    const received = performance.now();
    const webhook = { webhook: path };
    this.runtimeInFlight.inc(webhook);
    let recorded = false;
    return ({ code, operation, outcome }) => {
      if (recorded) return;
      recorded = true;
      const seconds = (performance.now() - received) / 1000;
      this.runtimeInFlight.dec(webhook);
      this.requests.inc({ path, operation, outcome });
      this.runtimeRequests.inc({ webhook: path, code: String(code) });
      this.duration.observe({ path }, seconds);
      this.runtimeLatency.observe(webhook, seconds);
    };
  }
}
