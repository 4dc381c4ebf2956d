import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { InformerHealth, InformerObserver } from '../../kube/informer.ts';
import type { WorkQueueObserver } from '../queue/work-queue.ts';

const CONTROLLER = 'staticsite';

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
  readonly queueDepth: Gauge<'name'>;
  readonly queueAdds: Counter<'name'>;
  readonly queueRetries: Counter<'name'>;
  readonly leaderStatus: Gauge<'name'>;
  readonly apiRequests: Counter<'verb' | 'resource' | 'code'>;
  readonly relists: Counter<'informer' | 'reason'>;
  readonly watchRestarts: Counter<'informer' | 'reason'>;
  private informers: () => InformerHealth[] = () => [];

  constructor(options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
    this.reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller, by result',
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
    this.queueDepth = new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: ['name'],
      registers,
    });
    this.queueAdds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    this.queueRetries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: ['name'],
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

  /** Where the informer gauges read from at scrape time. */
  watchInformers(source: () => InformerHealth[]): void {
    this.informers = source;
  }

  queueObserver(name = CONTROLLER): WorkQueueObserver {
    return {
      depth: (n) => this.queueDepth.set({ name }, n),
      added: () => this.queueAdds.inc({ name }),
      retried: () => this.queueRetries.inc({ name }),
    };
  }

  informerObserver(): InformerObserver {
    return {
      relisted: (informer, reason) => this.relists.inc({ informer, reason }),
      watchRestarted: (informer, reason) => this.watchRestarts.inc({ informer, reason }),
    };
  }

  observeRequest(info: { method: string; path: string; code: number }): void {
    this.apiRequests.inc({ verb: info.method, resource: resourceOfPath(info.path), code: String(info.code) });
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
