import { AsyncLocalStorage } from 'node:async_hooks';
import { expect } from 'chai';
import { Controller } from '../../controller/controller.ts';
import { ApiEventRecorder } from '../../controller/observability/events.ts';
import { silentLogger } from '../../controller/observability/logger.ts';
import { ControllerMetrics, resourceOfPath } from '../../controller/observability/metrics.ts';
import { OwnWrites } from '../../controller/own-writes.ts';
import { ItemExponentialFailureRateLimiter } from '../../controller/queue/rate-limiter.ts';
import { WorkQueue } from '../../controller/queue/work-queue.ts';
import { KubeApi } from '../../kube/api-client.ts';
import { PING, ProbesServer } from '../../observability/probes-server.ts';
import { createProcessLogger, type LogContext } from '../../observability/process-logger.ts';
import { FakeApiServer, ManualClock } from '../support/kube/index.ts';

describe('controller: metrics and probes', () => {
  it('names the resource of a request path', () => {
    expect(resourceOfPath('/api/v1/namespaces/web/configmaps')).to.equal('configmaps');
    expect(resourceOfPath('/api/v1/namespaces/web/configmaps/shop')).to.equal('configmaps');
    expect(resourceOfPath('/apis/apps/v1/namespaces/web/deployments/shop')).to.equal('deployments');
    expect(resourceOfPath('/apis/staticsite.dev/v1/namespaces/web/staticsites/shop/status')).to.equal(
      'staticsites/status',
    );
    expect(resourceOfPath('/apis/staticsite.dev/v1/staticsites')).to.equal('staticsites');
  });

  it('times the work queue as client-go does: in queue until taken, in work until done, unfinished while taken', async () => {
    const clock = new ManualClock();
    const metrics = new ControllerMetrics();
    const queue = new WorkQueue(
      clock,
      new ItemExponentialFailureRateLimiter(5, 1000),
      metrics.queueObserver(() => clock.now()),
    );
    metrics.setWorkers(4);
    /** A sample by its exposed name (a histogram's _bucket, _sum and _count included) and labels. */
    const value = async (name: string, labels: Record<string, string> = {}) => {
      const base = name.replace(/_(bucket|sum|count)$/, '');
      const metric = metrics.registry.getSingleMetric(name) ?? metrics.registry.getSingleMetric(base);
      return (await metric?.get())?.values.find(
        (v) =>
          ((v as { metricName?: string }).metricName ?? base) === name &&
          Object.entries(labels).every(([k, l]) => String(v.labels[k]) === l),
      )?.value;
    };
    const labels = { name: 'staticsite', controller: 'staticsite' };
    queue.add('web/a');
    await clock.advance(2000);
    const key = await queue.get();
    await clock.advance(3000);
    expect(await value('workqueue_unfinished_work_seconds', labels)).to.equal(3);
    expect(await value('workqueue_longest_running_processor_seconds', labels)).to.equal(3);
    expect(await value('controller_runtime_active_workers', { controller: 'staticsite' })).to.equal(1);
    expect(await value('controller_runtime_max_concurrent_reconciles', { controller: 'staticsite' })).to.equal(4);
    queue.done(key ?? '');
    expect(await value('workqueue_unfinished_work_seconds', labels)).to.equal(0);
    expect(await value('workqueue_queue_duration_seconds_sum', labels)).to.equal(2);
    expect(await value('workqueue_work_duration_seconds_sum', labels)).to.equal(3);
    // Buckets are prometheus.ExponentialBuckets(10e-9, 10, 12): 1e-8 ... 1000.
    expect(await value('workqueue_work_duration_seconds_bucket', { ...labels, le: '1' })).to.equal(0);
    expect(await value('workqueue_work_duration_seconds_bucket', { ...labels, le: '10' })).to.equal(1);
    expect(await value('workqueue_work_duration_seconds_bucket', { ...labels, le: '1e-8' })).to.equal(0);
    expect(await value('workqueue_adds_total', labels)).to.equal(1);
    expect(await value('controller_runtime_reconcile_total', { result: 'requeue' })).to.equal(0);
  });

  it('counts API requests as client-go rest_client_requests_total does: code, host, method', async () => {
    const metrics = new ControllerMetrics();
    metrics.observeRequest({ method: 'WATCH', path: '/api/v1/configmaps', code: 200, host: '10.96.0.1:443' });
    metrics.observeRequest({
      method: 'PUT',
      path: '/api/v1/namespaces/a/configmaps/b',
      code: 0,
      host: '10.96.0.1:443',
    });
    const values = (await metrics.registry.getSingleMetric('rest_client_requests_total')?.get())?.values ?? [];
    expect(values.map((v) => v.labels)).to.deep.equal([
      { code: '200', host: '10.96.0.1:443', method: 'GET' },
      { code: '<error>', host: '10.96.0.1:443', method: 'PUT' },
    ]);
  });

  it('logs with level words, the component, and per reconcile controller-runtime fields with its own reconcileID', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const destination = { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) };
    const context: LogContext = new AsyncLocalStorage();
    const logger = createProcessLogger('staticsite-controller', 'info', { destination, context });
    const clock = new ManualClock();
    const reconciler = {
      reconcile: async (key: string) => {
        logger.info({ key }, 'reconciling');
        await new Promise((resolve) => setImmediate(resolve));
        logger.warn('still in the same reconcile');
        return {};
      },
    };
    const controller = new Controller(
      { reconciler, clock, logger, metrics: new ControllerMetrics(), logContext: context },
      { workers: 2, shutdownGraceMs: 100 },
    );
    const stop = new AbortController();
    const running = controller.run(stop.signal);
    controller.queue.add('web/a');
    controller.queue.add('web/b');
    await new Promise((resolve) => setTimeout(resolve, 20));
    stop.abort();
    await clock.advance(100);
    await running;
    logger.info('outside any reconcile');
    expect(lines).to.have.length(5);
    for (const line of lines) {
      expect(line.component).to.equal('staticsite-controller');
      expect(line.time).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
    const ofSite = (name: string) => lines.filter((l) => l.name === name);
    for (const name of ['a', 'b']) {
      expect(ofSite(name).map((l) => l.level)).to.deep.equal(['info', 'warn']);
      expect(ofSite(name)[0]).to.include({ controller: 'staticsite', namespace: 'web', name });
      expect(ofSite(name)[0]?.reconcileID).to.match(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      expect(ofSite(name)[1]?.reconcileID).to.equal(ofSite(name)[0]?.reconcileID);
    }
    expect(ofSite('a')[0]?.reconcileID).to.not.equal(ofSite('b')[0]?.reconcileID);
    expect(lines.at(-1)).to.not.have.property('reconcileID');
  });

  it('serves /healthz, /readyz and /metrics with informer ages and leader status', async () => {
    const metrics = new ControllerMetrics();
    metrics.watchInformers(() => [
      { name: 'staticsites', synced: true, watching: false, downForMs: 45_000, lastEventAgeMs: 61_500 },
    ]);
    metrics.setLeader('staticsite-controller', true);
    metrics.reconciled('success', 0.02);
    let ready = false;
    const server = new ProbesServer({
      live: [PING],
      ready: [
        {
          name: 'informer-staticsites',
          check: () => (ready ? { ok: true } : { ok: false, reason: 'watch down for 45s' }),
        },
      ],
      registry: metrics.registry,
    });
    const port = await server.listen(0, '127.0.0.1');
    try {
      const base = `http://127.0.0.1:${port}`;
      expect((await fetch(`${base}/healthz`)).status).to.equal(200);
      const notReady = await fetch(`${base}/readyz`);
      // k8s.io/apiserver healthz.go: the failing answer is always verbose, the reason withheld, 500.
      expect(notReady.status).to.equal(500);
      expect(await notReady.text()).to.equal('[-]informer-staticsites failed: reason withheld\nreadyz check failed\n');
      ready = true;
      expect((await fetch(`${base}/readyz`)).status).to.equal(200);
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(text).to.include('staticsite_informer_last_event_age_seconds{informer="staticsites"} 61.5');
      expect(text).to.include('staticsite_informer_watch_up{informer="staticsites"} 0');
      expect(text).to.include('leader_election_master_status{name="staticsite-controller"} 1');
      expect(text).to.include('controller_runtime_reconcile_total{controller="staticsite",result="success"} 1');
      expect((await fetch(`${base}/nope`)).status).to.equal(404);
    } finally {
      await server.close();
    }
  });
});

describe('controller: the record of its own writes', () => {
  it('skips exactly the event that echoes our own last write, once', () => {
    const filter = new OwnWrites();
    const written = { metadata: { namespace: 'web', name: 'shop', resourceVersion: '42' } };
    filter.wrote('Deployment', written);
    expect(
      filter.isEcho('Deployment', { metadata: { namespace: 'web', name: 'shop', resourceVersion: '41' } }),
    ).to.equal(false);
    expect(filter.isEcho('ConfigMap', written)).to.equal(false);
    expect(filter.isEcho('Deployment', written)).to.equal(true);
    expect(filter.isEcho('Deployment', written)).to.equal(false);
  });

  it('recognises each of several writes made in one reconcile (finalizer, then status)', () => {
    const filter = new OwnWrites();
    const at = (rv: string) => ({ metadata: { namespace: 'web', name: 'shop', resourceVersion: rv } });
    filter.wrote('StaticSite', at('10'));
    filter.wrote('StaticSite', at('12'));
    expect(filter.isEcho('StaticSite', at('10'))).to.equal(true);
    expect(filter.isEcho('StaticSite', at('11'))).to.equal(false); // someone else's write in between
    expect(filter.isEcho('StaticSite', at('12'))).to.equal(true);
  });

  it('tells the reconciler whether a cached copy shows its newest write, and forgets the writes a copy shows', () => {
    const writes = new OwnWrites();
    const at = (rv: string) => ({ metadata: { namespace: 'web', name: 'shop', resourceVersion: rv } });
    expect(writes.isCurrent('StaticSite', at('9'))).to.equal(true); // no write of ours to wait for
    writes.wrote('StaticSite', at('10'));
    writes.wrote('StaticSite', at('12'));
    expect(writes.isCurrent('StaticSite', at('10'))).to.equal(false); // behind our last write
    expect(writes.isCurrent('StaticSite', at('12'))).to.equal(true);
    expect(writes.isEcho('StaticSite', at('12'))).to.equal(false); // seen already
    expect(writes.isCurrent('StaticSite', at('13'))).to.equal(true);
    writes.wrote('StaticSite', at('14'));
    writes.forget('StaticSite', 'web/shop');
    expect(writes.isCurrent('StaticSite', at('13'))).to.equal(true);
  });
});

describe('controller: events', () => {
  const site = {
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: { name: 'shop', namespace: 'web', uid: 'u1', resourceVersion: '7' },
  };

  it('posts a core/v1 Event about the object, and folds repeats into counted PATCHes', async () => {
    const clock = new ManualClock();
    const server = new FakeApiServer();
    const recorder = new ApiEventRecorder({
      api: new KubeApi(server),
      clock,
      logger: silentLogger(),
      component: 'staticsite-controller',
      instance: 'replica-a',
    });
    recorder.event(site, 'Warning', 'ReconcileError', 'boom');
    await recorder.flush();
    const posted = server.writes();
    expect(posted.map((r) => `${r.method} ${r.path}`)).to.deep.equal(['POST /api/v1/namespaces/web/events']);
    expect(posted[0]?.body).to.deep.include({
      involvedObject: {
        apiVersion: 'staticsite.dev/v1',
        kind: 'StaticSite',
        name: 'shop',
        namespace: 'web',
        uid: 'u1',
        resourceVersion: '7',
      },
      reason: 'ReconcileError',
      message: 'boom',
      type: 'Warning',
      count: 1,
      source: { component: 'staticsite-controller' },
      reportingComponent: 'staticsite-controller',
      reportingInstance: 'replica-a',
    });
    for (let i = 0; i < 5; i++) recorder.event(site, 'Warning', 'ReconcileError', 'boom');
    await recorder.flush();
    expect(server.writes()).to.have.length(1); // repeats within 10 s are only counted
    await clock.advance(10_000);
    recorder.event(site, 'Warning', 'ReconcileError', 'boom');
    await recorder.flush();
    const patches = server.writes().slice(1);
    expect(patches.map((r) => r.method)).to.deep.equal(['PATCH']);
    expect(patches[0]?.body).to.deep.include({ count: 7 });
    recorder.event(site, 'Normal', 'Created', 'Created ConfigMap "shop"');
    await recorder.flush();
    expect(server.writes().at(-1)?.method).to.equal('POST');
  });
});
