import { collectDefaultMetrics } from 'prom-client';
import type { InformerHealth, InformerObserver } from '../../kube/informer.ts';
import { CONTROLLER_RUNTIME_BUCKETS } from '../../observability/metric-buckets.ts';
import { counter, gauge, histogram, metricsClass, scrapedGauge } from '../../observability/metric-declarations.ts';
import type { WorkQueueObserver } from '../queue/work-queue.ts';

const CONTROLLER = 'staticsite';

/** controller-runtime labels every work-queue metric with both, set to the controller's name. */
type QueueLabel = 'name' | 'controller';
const QUEUE_LABELS: readonly QueueLabel[] = ['name', 'controller'];

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** The path's resource (with subresource), for request metrics: /apis/g/v/namespaces/ns/deployments/x -> deployments. */
export function resourceOfPath(path: string): string {
  const parts = path.split('?')[0]?.split('/').filter(Boolean) ?? [];
  const rest = parts[0] === 'api' ? parts.slice(2) : parts.slice(3);
  const tail = rest[0] === 'namespaces' && rest.length > 2 ? rest.slice(2) : rest;
  const [resource = '', , subresource] = tail;
  return subresource ? `${resource}/${subresource}` : resource;
}

const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const DNS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * The metrics set as things happen, one a line: names, help texts, labels and buckets as
 * controller-runtime (pkg/internal/controller/metrics, pkg/internal/metrics/workqueue.go), client-go's
 * rest_client_requests_total (k8s.io/client-go/tools/metrics, registered by controller-runtime's
 * pkg/metrics/client_go_adapter.go) and its leader election declare them, then our own.
 */
// biome-ignore format: a table, one metric a line
const METRICS = {
  reconcileTotal: counter('controller_runtime_reconcile_total', 'Total number of reconciliations per controller', ['controller', 'result']),
  reconcileErrors: counter('controller_runtime_reconcile_errors_total', 'Total number of reconciliation errors per controller', ['controller']),
  reconcileTime: histogram('controller_runtime_reconcile_time_seconds', 'Length of time per reconciliation per controller', ['controller'], RECONCILE_BUCKETS),
  queueDepth: gauge('workqueue_depth', 'Current depth of workqueue', QUEUE_LABELS),
  queueAdds: counter('workqueue_adds_total', 'Total number of adds handled by workqueue', QUEUE_LABELS),
  queueRetries: counter('workqueue_retries_total', 'Total number of retries handled by workqueue', QUEUE_LABELS),
  queueDuration: histogram('workqueue_queue_duration_seconds', 'How long in seconds an item stays in workqueue before being requested', QUEUE_LABELS, CONTROLLER_RUNTIME_BUCKETS),
  workDuration: histogram('workqueue_work_duration_seconds', 'How long in seconds processing an item from workqueue takes.', QUEUE_LABELS, CONTROLLER_RUNTIME_BUCKETS),
  maxConcurrentReconciles: gauge('controller_runtime_max_concurrent_reconciles', 'Maximum number of concurrent reconciles per controller', ['controller']),
  restClientRequests: counter('rest_client_requests_total', 'Number of HTTP requests, partitioned by status code, method, and host.', ['code', 'host', 'method']),
  leaderStatus: gauge('leader_election_master_status', 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.', ['name']),
  apiRequests: counter('staticsite_controller_api_requests_total', 'Requests the controller made to the API server, by verb, resource and HTTP code', ['verb', 'resource', 'code']),
  relists: counter('staticsite_informer_relists_total', 'Full lists by informer and reason (initial, expired = 410 Gone, error)', ['informer', 'reason']),
  watchRestarts: counter('staticsite_informer_watch_restarts_total', 'Watch reconnects by informer and reason (closed by the server, error, idle = no event or bookmark for too long)', ['informer', 'reason']),
  dnsRequests: counter('staticsite_dns_requests_total', 'Exchanges with the DNS server (--records dns:...) by operation (update, soa, transfer) and result (the rcode, or error for no usable answer)', ['operation', 'result']),
  shardMoves: counter('staticsite_shard_moves_total', 'Moves the sharder made (--sharded): assign (an unlabelled site, or one of a dead shard), drain (asked a live shard to hand a site over), undrain; by result (ok, conflict, error)', ['kind', 'result']),
  dnsRequestDuration: histogram('staticsite_dns_request_duration_seconds', 'Time of each exchange with the DNS server, by operation, whatever its result', ['operation'], DNS_BUCKETS),
};

/** The gauges read at scrape time from the work queue (controller-runtime's) and from the informers' health. */
// biome-ignore format: a table, one metric a line
const SCRAPED = {
  unfinishedWork: gauge('workqueue_unfinished_work_seconds', "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.", QUEUE_LABELS),
  longestRunning: gauge('workqueue_longest_running_processor_seconds', 'How many seconds has the longest running processor for workqueue been running.', QUEUE_LABELS),
  activeWorkers: gauge('controller_runtime_active_workers', 'Number of currently used workers per controller', ['controller']),
  lastEventAge: gauge('staticsite_informer_last_event_age_seconds', 'Seconds since the informer last received a list, an event or a bookmark', ['informer']),
  synced: gauge('staticsite_informer_synced', '1 once the informer has completed its first list', ['informer']),
  watchUp: gauge('staticsite_informer_watch_up', '1 while the informer has an open watch', ['informer']),
};

/** Each informer gauge's value, from the informer's health. */
const INFORMER_VALUES: ReadonlyArray<[gauge: keyof typeof SCRAPED, value: (h: InformerHealth) => number]> = [
  ['lastEventAge', (h) => h.lastEventAgeMs / 1000],
  ['synced', (h) => (h.synced ? 1 : 0)],
  ['watchUp', (h) => (h.watching ? 1 : 0)],
];

/**
 * Every metric of one controller process, in its own registry (no global state). Names follow
 * controller-runtime and client-go where they have an equivalent.
 */
export class ControllerMetrics extends metricsClass(METRICS) {
  /** When each key now being processed was taken, and when each due key was added (client-go's maps). */
  private readonly processingSince = new Map<string, number>();
  private reconcileCount = 0;
  private readonly addedAt = new Map<string, number>();
  private now: () => number = () => Date.now();
  private informers: () => InformerHealth[] = () => [];

  constructor(options: { processMetrics?: boolean } = {}) {
    super();
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
    const queue = { name: CONTROLLER, controller: CONTROLLER };
    scrapedGauge(this.registry, SCRAPED.unfinishedWork, (g) => g.set(queue, sum(this.processing())));
    scrapedGauge(this.registry, SCRAPED.longestRunning, (g) => g.set(queue, Math.max(0, ...this.processing())));
    scrapedGauge(this.registry, SCRAPED.activeWorkers, (g) =>
      g.set({ controller: CONTROLLER }, this.processingSince.size),
    );
    for (const [key, value] of INFORMER_VALUES) {
      scrapedGauge(this.registry, SCRAPED[key], (g) => {
        for (const h of this.informers()) g.set({ informer: h.name }, value(h));
      });
    }
    this.leaderStatus.set({ name: 'staticsite-controller' }, 0);
  }

  /** Seconds each key now being processed has been, at the queue's clock. */
  private processing(): number[] {
    return [...this.processingSince.values()].map((since) => (this.now() - since) / 1000);
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

  /** Reconciles finished so far, any result (read without a scrape). */
  get reconciles(): number {
    return this.reconcileCount;
  }

  reconciled(result: 'success' | 'error' | 'requeue_after', seconds: number): void {
    this.reconcileCount++;
    this.reconcileTotal.inc({ controller: CONTROLLER, result });
    if (result === 'error') this.reconcileErrors.inc({ controller: CONTROLLER });
    this.reconcileTime.observe({ controller: CONTROLLER }, seconds);
  }

  setLeader(name: string, leader: boolean): void {
    this.leaderStatus.set({ name }, leader ? 1 : 0);
  }
}
