import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { InformerHealth, InformerObserver } from '../../kube/informer.ts';
import { CONTROLLER_RUNTIME_BUCKETS } from '../../kube/metric-buckets.ts';
import type { WorkQueueObserver } from '../queue/work-queue.ts';

const CONTROLLER = 'staticsite';

/** controller-runtime labels every work-queue metric with both, set to the controller's name. */
type QueueLabel = 'name' | 'controller';

/** The path's resource (with subresource), for request metrics: /apis/g/v/namespaces/ns/deployments/x -> deployments. */
export function resourceOfPath(path: string): string {
  const parts = path.split('?')[0]?.split('/').filter(Boolean) ?? [];
  const rest = parts[0] === 'api' ? parts.slice(2) : parts.slice(3);
  const tail = rest[0] === 'namespaces' && rest.length > 2 ? rest.slice(2) : rest;
  const [resource = '', , subresource] = tail;
  return subresource ? `${resource}/${subresource}` : resource;
}

/**
 * Every metric of one controller process, in its own registry (no global state). Names follow
 * controller-runtime and client-go where they have an equivalent.
 */
export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly queueDepth: Gauge<QueueLabel>;
  readonly queueAdds: Counter<QueueLabel>;
  readonly queueRetries: Counter<QueueLabel>;
  readonly queueDuration: Histogram<QueueLabel>;
  readonly workDuration: Histogram<QueueLabel>;
  /** When each key now being processed was taken, and when each due key was added (client-go's maps). */
  private readonly processingSince = new Map<string, number>();
  private readonly addedAt = new Map<string, number>();
  private now: () => number = () => Date.now();
  readonly restClientRequests: Counter<'code' | 'host' | 'method'>;
  readonly maxConcurrentReconciles: Gauge<'controller'>;
  readonly leaderStatus: Gauge<'name'>;
  readonly apiRequests: Counter<'verb' | 'resource' | 'code'>;
  readonly relists: Counter<'informer' | 'reason'>;
  readonly watchRestarts: Counter<'informer' | 'reason'>;
  readonly dnsRequests: Counter<'operation' | 'result'>;
  readonly dnsRequestDuration: Histogram<'operation'>;
  private informers: () => InformerHealth[] = () => [];

  constructor(options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
    this.reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.reconcileTime = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    // The work-queue metrics of controller-runtime (pkg/internal/metrics/workqueue.go): names, help
    // texts, labels and buckets.
    const queueLabels: QueueLabel[] = ['name', 'controller'];
    this.queueDepth = new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: queueLabels,
      registers,
    });
    this.queueAdds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: queueLabels,
      registers,
    });
    this.queueRetries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: queueLabels,
      registers,
    });
    this.queueDuration = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: queueLabels,
      buckets: CONTROLLER_RUNTIME_BUCKETS,
      registers,
    });
    this.workDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames: queueLabels,
      buckets: CONTROLLER_RUNTIME_BUCKETS,
      registers,
    });
    const processing = () => [...this.processingSince.values()].map((since) => (this.now() - since) / 1000);
    new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help:
        "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
        'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
      labelNames: queueLabels,
      registers,
      collect() {
        this.set(
          { name: CONTROLLER, controller: CONTROLLER },
          processing().reduce((a, b) => a + b, 0),
        );
      },
    });
    new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames: queueLabels,
      registers,
      collect() {
        this.set({ name: CONTROLLER, controller: CONTROLLER }, Math.max(0, ...processing()));
      },
    });
    const active = () => this.processingSince.size;
    new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
      collect() {
        this.set({ controller: CONTROLLER }, active());
      },
    });
    this.maxConcurrentReconciles = new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    });
    // client-go's rest_client_requests_total (k8s.io/client-go/tools/metrics, registered by
    // controller-runtime's pkg/metrics/client_go_adapter.go).
    this.restClientRequests = new Counter({
      name: 'rest_client_requests_total',
      help: 'Number of HTTP requests, partitioned by status code, method, and host.',
      labelNames: ['code', 'host', 'method'],
      registers,
    });
    this.leaderStatus = new Gauge({
      name: 'leader_election_master_status',
      help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.',
      labelNames: ['name'],
      registers,
    });
    this.apiRequests = new Counter({
      name: 'staticsite_controller_api_requests_total',
      help: 'Requests the controller made to the API server, by verb, resource and HTTP code',
      labelNames: ['verb', 'resource', 'code'],
      registers,
    });
    this.relists = new Counter({
      name: 'staticsite_informer_relists_total',
      help: 'Full lists by informer and reason (initial, expired = 410 Gone, error)',
      labelNames: ['informer', 'reason'],
      registers,
    });
    this.watchRestarts = new Counter({
      name: 'staticsite_informer_watch_restarts_total',
      help: 'Watch reconnects by informer and reason (closed by the server, error, idle = no event or bookmark for too long)',
      labelNames: ['informer', 'reason'],
      registers,
    });
    this.dnsRequests = new Counter({
      name: 'staticsite_dns_requests_total',
      help: 'Exchanges with the DNS server (--records dns:...) by operation (update, soa, transfer) and result (the rcode, or error for no usable answer)',
      labelNames: ['operation', 'result'],
      registers,
    });
    this.dnsRequestDuration = new Histogram({
      name: 'staticsite_dns_request_duration_seconds',
      help: 'Time of each exchange with the DNS server, by operation, whatever its result',
      labelNames: ['operation'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    const informers = () => this.informers();
    new Gauge({
      name: 'staticsite_informer_last_event_age_seconds',
      help: 'Seconds since the informer last received a list, an event or a bookmark',
      labelNames: ['informer'],
      registers,
      collect() {
        for (const h of informers()) this.set({ informer: h.name }, h.lastEventAgeMs / 1000);
      },
    });
    new Gauge({
      name: 'staticsite_informer_synced',
      help: '1 once the informer has completed its first list',
      labelNames: ['informer'],
      registers,
      collect() {
        for (const h of informers()) this.set({ informer: h.name }, h.synced ? 1 : 0);
      },
    });
    new Gauge({
      name: 'staticsite_informer_watch_up',
      help: '1 while the informer has an open watch',
      labelNames: ['informer'],
      registers,
      collect() {
        for (const h of informers()) this.set({ informer: h.name }, h.watching ? 1 : 0);
      },
    });
    this.leaderStatus.set({ name: 'staticsite-controller' }, 0);
  }

  observeDns(operation: string, result: string, seconds: number): void {
    this.dnsRequests.inc({ operation, result });
    this.dnsRequestDuration.observe({ operation }, seconds);
  }

  /** Where the informer gauges read from at scrape time. */
  watchInformers(source: () => InformerHealth[]): void {
    this.informers = source;
  }

  /** The queue's observer; `now` is the queue's clock, which the unfinished-work gauges read at scrape time. */
  queueObserver(now: () => number, name = CONTROLLER): WorkQueueObserver {
    const labels = { name, controller: name };
    this.now = now;
    // controller-runtime's workqueue provider creates every series with the queue.
    this.queueDepth.set(labels, 0);
    this.queueAdds.inc(labels, 0);
    this.queueRetries.inc(labels, 0);
    this.queueDuration.zero(labels);
    this.workDuration.zero(labels);
    return {
      depth: (n) => this.queueDepth.set(labels, n),
      added: (key, at) => {
        this.queueAdds.inc(labels);
        if (!this.addedAt.has(key)) this.addedAt.set(key, at);
      },
      got: (key, at) => {
        const added = this.addedAt.get(key);
        if (added !== undefined) this.queueDuration.observe(labels, (at - added) / 1000);
        this.addedAt.delete(key);
        this.processingSince.set(key, at);
      },
      finished: (key, at) => {
        const since = this.processingSince.get(key);
        if (since !== undefined) this.workDuration.observe(labels, (at - since) / 1000);
        this.processingSince.delete(key);
      },
      retried: () => this.queueRetries.inc(labels),
    };
  }

  informerObserver(): InformerObserver {
    return {
      relisted: (informer, reason) => this.relists.inc({ informer, reason }),
      watchRestarted: (informer, reason) => this.watchRestarts.inc({ informer, reason }),
    };
  }

  observeRequest(info: { method: string; path: string; code: number; host?: string }): void {
    this.apiRequests.inc({ verb: info.method, resource: resourceOfPath(info.path), code: String(info.code) });
    // client-go counts a request that got no answer as code "<error>"; a watch is a GET.
    this.restClientRequests.inc({
      code: info.code === 0 ? '<error>' : String(info.code),
      host: info.host ?? '',
      method: info.method === 'WATCH' ? 'GET' : info.method,
    });
  }

  /**
   * The controller's series at zero from the start, as controller-runtime's initMetrics makes them,
   * so dashboards and alerts see the controller before its first reconcile or error.
   */
  setWorkers(workers: number): void {
    this.maxConcurrentReconciles.set({ controller: CONTROLLER }, workers);
    for (const result of ['error', 'requeue_after', 'requeue', 'success']) {
      this.reconcileTotal.inc({ controller: CONTROLLER, result }, 0);
    }
    this.reconcileErrors.inc({ controller: CONTROLLER }, 0);
  }

  reconciled(result: 'success' | 'error' | 'requeue_after', seconds: number): void {
    this.reconcileTotal.inc({ controller: CONTROLLER, result });
    if (result === 'error') this.reconcileErrors.inc({ controller: CONTROLLER });
    this.reconcileTime.observe({ controller: CONTROLLER }, seconds);
  }

  setLeader(name: string, leader: boolean): void {
    this.leaderStatus.set({ name }, leader ? 1 : 0);
  }
}
