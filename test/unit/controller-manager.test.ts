import { expect } from 'chai';
import { FINALIZER, type StaticSiteV1 } from '../../api/index.ts';
import type { ControllerManager } from '../../controller/manager.ts';
import { ControllerMetrics } from '../../controller/observability/metrics.ts';
import type { ExternalRecord, RecordStore } from '../../controller/records/record-store.ts';
import type { ConfigMap, Deployment } from '../../kube/objects.ts';
import { Probes } from '../../observability/probes-server.ts';
import { FakeApiServer, ManualClock, settle } from '../support/kube/index.ts';
import { type RunningManager, startManager } from './controller-fixtures.ts';

const NS = 'web';
const SITES = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const DEPLOYS = `/apis/apps/v1/namespaces/${NS}/deployments`;

describe('controller: manager (informers, queue and workers together)', () => {
  let clock: ManualClock;
  let server: FakeApiServer;
  let manager: ControllerManager;
  let running: RunningManager;
  const records = new Map<string, ExternalRecord>();
  const store: RecordStore = {
    publish: async (key, record) => {
      records.set(key, record);
      return 'created';
    },
    remove: async (key) => (records.delete(key) ? 'removed' : 'absent'),
  };

  const site = (name: string): StaticSiteV1 => ({
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: { name, namespace: NS },
    spec: { content: name, replicas: 1 },
  });

  let metrics: ControllerMetrics;
  const reconcileCount = async () =>
    (await metrics.registry.getSingleMetric('controller_runtime_reconcile_total')?.get())?.values.reduce(
      (sum, v) => sum + v.value,
      0,
    ) ?? 0;

  beforeEach(async () => {
    clock = new ManualClock();
    metrics = new ControllerMetrics();
    server = new FakeApiServer();
    records.clear();
    server.seed(SITES, site('a'));
    running = await startManager(server, { namespace: NS, clock, metrics, records: store, resyncPeriodMs: 60_000 });
    manager = running.manager;
  });

  afterEach(() => running.stop());

  it('reconciles every listed site once the caches sync, and reports ready', async () => {
    expect(server.read<StaticSiteV1>(SITES, 'a')?.metadata.finalizers).to.deep.equal([FINALIZER]);
    expect(server.read(CMS, 'a')).to.not.equal(undefined);
    expect(records.has(`${NS}/a`)).to.equal(true);
    // k8s.io/apiserver healthz.go's verbose answer: "[+]%s ok" per check, then "%s check passed".
    expect(new Probes({ ready: manager.readiness() }).answer('/readyz?verbose')?.body).to.equal(
      '[+]informer-staticsites ok\n' +
        '[+]informer-configmaps ok\n' +
        '[+]informer-deployments ok\n' +
        '[+]informer-services ok\n' +
        '[+]informer-hostname-claims ok\n' +
        'readyz check passed\n',
    );
    expect(new Probes({ live: manager.liveness() }).answer('/livez?verbose')?.body).to.equal(
      '[+]ping ok\n[+]controller ok\nlivez check passed\n',
    );
  });

  it('a child’s deletion re-queues its owner, which recreates it', async () => {
    const uid = server.read<ConfigMap>(CMS, 'a')?.metadata.uid;
    server.remove(CMS, 'a');
    await clock.advance(0);
    const again = server.read<ConfigMap>(CMS, 'a');
    expect(again?.metadata.uid).to.not.equal(undefined);
    expect(again?.metadata.uid).to.not.equal(uid);
  });

  it('a change to a child by someone else is reverted through its owner', async () => {
    server.modify<Deployment>(DEPLOYS, 'a', (d) => {
      if (d.spec) d.spec.replicas = 4;
    });
    await clock.advance(0);
    expect(server.read<Deployment>(DEPLOYS, 'a')?.spec?.replicas).to.equal(1);
  });

  it('a failing reconcile is retried with backoff until it succeeds', async () => {
    server.failNext((r) => r.method === 'POST' && r.path === CMS, { status: 500, reason: 'InternalError' }, 3);
    server.seed(SITES, site('b'));
    await clock.advance(0);
    expect(server.read(CMS, 'b')).to.equal(undefined);
    await clock.advance(5 + 10 + 20);
    expect(server.read(CMS, 'b')).to.not.equal(undefined);
  });

  it('a resync reconciles settled sites from the caches, without a single request', async () => {
    const requests = server.requests.length;
    const reconciles = await reconcileCount();
    await clock.advance(60_000);
    expect(await reconcileCount()).to.equal(reconciles + 1);
    expect(server.requests.slice(requests).map((r) => `${r.method} ${r.path}`)).to.deep.equal([]);
  });

  it('a site deleted while the watch was away is cleaned up after the 410 relist', async () => {
    await clock.advance(5000);
    server.closeWatches(SITES);
    server.failNextWatch(410, { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
    server.remove(SITES, 'a');
    await clock.advance(0);
    await settle();
    expect(records.has(`${NS}/a`)).to.equal(false);
  });
});
