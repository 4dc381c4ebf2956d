import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { CONTROLLER_RUNTIME_BUCKETS } from '../../kube/metric-buckets.ts';

/** The webhook's Prometheus metrics, on a registry of their own (no global state). */
export class WebhookMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'staticsite_webhook_requests_total',
    help: 'Webhook requests by path, operation and outcome (allowed, denied, patched, error, bad_request).',
    labelNames: ['path', 'operation', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'staticsite_webhook_request_duration_seconds',
    help: 'Time from request received to response written.',
    labelNames: ['path'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });
  readonly inFlight = new Gauge({
    name: 'staticsite_webhook_requests_in_flight',
    help: 'Requests being handled now.',
    registers: [this.registry],
  });
  readonly panics = new Counter({
    name: 'staticsite_webhook_handler_panics_total',
    help: 'Unexpected exceptions in a handler, answered with 500.',
    labelNames: ['path'] as const,
    registers: [this.registry],
  });
  readonly certExpiry = new Gauge({
    name: 'staticsite_webhook_certificate_expiry_timestamp_seconds',
    help: 'notAfter of the serving certificate in use, as a Unix timestamp.',
    registers: [this.registry],
  });
  // controller-runtime's webhook metrics (pkg/webhook/internal/metrics), for its dashboards and
  // alerts: labelled by the webhook's path, the code being the HTTP status.
  readonly runtimeRequests = new Counter({
    name: 'controller_runtime_webhook_requests_total',
    help: 'Total number of admission requests by HTTP status code.',
    labelNames: ['webhook', 'code'] as const,
    registers: [this.registry],
  });
  readonly runtimeLatency = new Histogram({
    name: 'controller_runtime_webhook_latency_seconds',
    help: 'Histogram of the latency of processing admission requests',
    labelNames: ['webhook'] as const,
    buckets: CONTROLLER_RUNTIME_BUCKETS,
    registers: [this.registry],
  });
  readonly runtimeInFlight = new Gauge({
    name: 'controller_runtime_webhook_requests_in_flight',
    help: 'Current number of admission requests being served.',
    labelNames: ['webhook'] as const,
    registers: [this.registry],
  });

  readonly workersReplaced = new Counter({
    name: 'staticsite_webhook_review_workers_replaced_total',
    help: 'Review workers replaced: after a review overran its deadline, ran out of its heap, or the worker exited.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly reviewQueueLength = new Gauge({
    name: 'staticsite_webhook_review_queue_length',
    help: 'Reviews waiting for a free review worker.',
    registers: [this.registry],
  });

  readonly certReloads = new Counter({
    name: 'staticsite_webhook_certificate_reloads_total',
    help: 'Serving certificates loaded from the cert dir after start.',
    registers: [this.registry],
  });

  constructor() {
    // As controller-runtime's InstrumentedHook: the 200 and 500 series exist from the start.
    for (const webhook of ['/mutate', '/validate', '/convert']) {
      for (const code of ['200', '500']) this.runtimeRequests.inc({ webhook, code }, 0);
      this.runtimeInFlight.set({ webhook }, 0);
    }
    for (const reason of ['deadline', 'memory', 'exit']) this.workersReplaced.inc({ reason }, 0);
  }
}
