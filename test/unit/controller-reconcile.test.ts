import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { FINALIZER, type StaticSiteV1 } from '../../api/index.ts';
import { CHILDREN, type ChildKind, type ChildRegistry } from '../../controller/child-registry.ts';
import { claimName, HostnameClaims } from '../../controller/claims/hostname-claims.ts';
import { MemoryEventRecorder } from '../../controller/observability/events.ts';
import { silentLogger } from '../../controller/observability/logger.ts';
import { mutateMetadata } from '../../controller/reconcile/children.ts';
import type { ChildLookup } from '../../controller/reconcile/ensure.ts';
import { ReconcileProblem, SiteReconciler } from '../../controller/reconcile/reconciler.ts';
import type { ExternalRecord, RecordStore } from '../../controller/records/record-store.ts';
import { KubeApi } from '../../kube/api-client.ts';
import type { ConfigMap, Deployment, KubeObject, Lease, Service } from '../../kube/objects.ts';
import { collectionPath, type ResourceType } from '../../kube/resources.ts';
import { FakeApiServer, ManualClock } from '../support/kube/index.ts';

const NS = 'web';
const SITES = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const DEPLOYS = `/apis/apps/v1/namespaces/${NS}/deployments`;
const SVCS = `/api/v1/namespaces/${NS}/services`;
const CLAIMS = '/apis/coordination.k8s.io/v1/namespaces/staticsite-system/leases';

class MemoryRecords implements RecordStore {
  readonly records = new Map<string, ExternalRecord>();
  failPublish: Error | undefined;
  failRemove: Error | undefined;
  async publish(key: string, record: ExternalRecord) {
    if (this.failPublish) throw this.failPublish;
    const before = this.records.get(key);
    this.records.set(key, record);
    if (!before) return 'created' as const;
    return JSON.stringify(before) === JSON.stringify(record) ? ('unchanged' as const) : ('updated' as const);
  }
  async remove(key: string) {
    if (this.failRemove) throw this.failRemove;
    return this.records.delete(key) ? ('removed' as const) : ('absent' as const);
  }
}

/** Reads children straight from the fake server: a cache that is never stale. */
function lookup<T extends KubeObject>(server: FakeApiServer, collection: string): ChildLookup<T> {
  return { get: (key) => server.read<T>(collection, key.split('/')[1] ?? '') };
}

/** Hostname claims in staticsite-system of the fake server, with a cache that is never stale. */
function claimsOn(server: FakeApiServer): HostnameClaims {
  return new HostnameClaims({
    api: new KubeApi(server),
    namespace: 'staticsite-system',
    cache: {
      get: (key) => server.read<Lease>(CLAIMS, key.split('/')[1] ?? ''),
      list: () => server.list<Lease>(CLAIMS),
    },
  });
}

/** The reconciler under test on the fake server, its children read from the server (never stale), and the site "shop" stored. */
function reconcilerOn(
  server: FakeApiServer,
  extra: {
    records?: RecordStore;
    events?: MemoryEventRecorder;
    sites?: ChildLookup<StaticSiteV1>;
    registry?: ChildRegistry;
  } = {},
): SiteReconciler {
  const reconciler = new SiteReconciler({
    api: new KubeApi(server),
    ...(extra.sites && { sites: extra.sites }),
    children: (extra.registry ?? CHILDREN).map((kind) => ({
      kind,
      cache: lookup(server, collectionPath(kind.type, NS)),
    })),
    records: extra.records ?? new MemoryRecords(),
    claims: claimsOn(server),
    events: extra.events ?? new MemoryEventRecorder(),
    clock: new ManualClock(),
    logger: silentLogger(),
    config: { image: 'nginx:test', baseDomain: 'sites.test' },
  });
  server.seed<StaticSiteV1>(SITES, {
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: { name: 'shop', namespace: NS },
    spec: { content: '<h1>shop</h1>', replicas: 2, tier: 'dev' },
  });
  return reconciler;
}

describe('controller: reconcile', () => {
  let server: FakeApiServer;
  let records: MemoryRecords;
  let events: MemoryEventRecorder;
  let reconciler: SiteReconciler;
  const writes = () => server.writes().map((r) => `${r.method} ${r.path}`);

  beforeEach(() => {
    server = new FakeApiServer();
    records = new MemoryRecords();
    events = new MemoryEventRecorder();
    reconciler = reconcilerOn(server, { records, events });
  });

  const site = () => server.read<StaticSiteV1>(SITES, 'shop') as StaticSiteV1;
  const deploymentReady = () =>
    server.modify<Deployment>(DEPLOYS, 'shop', (d) => {
      d.status = {
        observedGeneration: d.metadata.generation,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 2,
        availableReplicas: 2,
      };
    });

  it('adds the finalizer before anything external exists, then creates three owned children and the record', async () => {
    await reconciler.reconcile(`${NS}/shop`);
    expect(writes()).to.deep.equal([
      `PUT ${SITES}/shop`,
      `POST ${CMS}`,
      `POST ${DEPLOYS}`,
      `POST ${SVCS}`,
      `POST ${CLAIMS}`,
      `PUT ${SITES}/shop/status`,
    ]);
    expect(site().metadata.finalizers).to.deep.equal([FINALIZER]);
    const owner = {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      name: 'shop',
      uid: site().metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    };
    for (const collection of [CMS, DEPLOYS, SVCS]) {
      const child = server.read<KubeObject>(collection, 'shop') as KubeObject;
      expect(child.metadata.ownerReferences).to.deep.equal([owner]);
      expect(child.metadata.labels).to.include({ 'app.kubernetes.io/managed-by': 'staticsite-controller' });
    }
    expect(server.read<ConfigMap>(CMS, 'shop')?.data).to.deep.equal({ 'index.html': '<h1>shop</h1>' });
    const deployment = server.read<Deployment>(DEPLOYS, 'shop') as Deployment;
    expect(deployment.spec?.replicas).to.equal(2);
    expect(deployment.spec?.template?.metadata?.annotations).to.deep.equal({
      'staticsite.dev/content-sha256': createHash('sha256').update('<h1>shop</h1>').digest('hex'),
    });
    const container = deployment.spec?.template?.spec?.containers?.[0];
    expect(container).to.deep.include({ name: 'nginx', image: 'nginx:test' });
    expect(container?.readinessProbe?.httpGet).to.deep.equal({ path: '/', port: 'http' });
    // What the `restricted` Pod Security Standard asks (test/e2e/site-pods.test.ts has the API
    // server's verdict), and resources for the scheduler.
    expect(deployment.spec?.template?.spec?.securityContext).to.deep.equal({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container?.securityContext).to.deep.equal({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(container?.resources?.requests).to.have.keys('cpu', 'memory');
    expect(container?.resources?.limits).to.have.keys('memory');
    // The unprivileged nginx serves on 8080; the Service keeps port 80 and targets the named port.
    expect(container?.ports).to.deep.equal([{ name: 'http', containerPort: 8080 }]);
    expect(server.read<Service>(SVCS, 'shop')?.spec?.ports).to.deep.equal([
      { name: 'http', port: 80, targetPort: 'http' },
    ]);
    expect(deployment.spec?.template?.spec?.volumes).to.deep.equal([{ name: 'content', configMap: { name: 'shop' } }]);
    expect(server.read<Service>(SVCS, 'shop')?.spec?.selector).to.deep.equal(deployment.spec?.selector?.matchLabels);
    expect(records.records.get(`${NS}/shop`)).to.deep.equal({
      hostname: 'shop.web.sites.test',
      service: 'shop.web.svc.cluster.local',
      port: 80,
      site: 'web/shop',
    });
    expect(site().status?.conditions?.[0]).to.include({
      type: 'Ready',
      status: 'False',
      reason: 'RollingOut',
      message: 'Waiting for deployment spec update to be observed...',
    });
    expect(site().status).not.to.have.property('observedGeneration');
    expect(events.events.map((e) => `${e.type} ${e.reason}: ${e.message}`)).to.deep.equal([
      'Normal Created: Created ConfigMap "shop"',
      'Normal Created: Created Deployment "shop"',
      'Normal Created: Created Service "shop"',
      'Normal RecordPublished: Published shop.web.sites.test -> shop.web.svc.cluster.local',
    ]);
  });

  it('becomes Ready with observedGeneration == generation once the pods are available; then writes nothing', async () => {
    await reconciler.reconcile(`${NS}/shop`);
    deploymentReady();
    await reconciler.reconcile(`${NS}/shop`);
    expect(site().status).to.deep.include({
      observedGeneration: 1,
      readyReplicas: 2,
      url: 'http://shop.web.sites.test/',
    });
    expect(site().status?.conditions?.[0]).to.include({ status: 'True', reason: 'Available' });
    const before = server.writes().length;
    await reconciler.reconcile(`${NS}/shop`);
    await reconciler.reconcile(`${NS}/shop`);
    expect(server.writes().length).to.equal(before);
  });

  it('writes nothing when the live children carry server defaults and foreign additions', async () => {
    await reconciler.reconcile(`${NS}/shop`);
    server.modify<Deployment>(DEPLOYS, 'shop', (d) => {
      const c = d.spec?.template?.spec?.containers?.[0] as Record<string, unknown> & { readinessProbe: object };
      c.imagePullPolicy = 'IfNotPresent';
      c.terminationMessagePath = '/dev/termination-log';
      c.readinessProbe = { ...c.readinessProbe, timeoutSeconds: 1, periodSeconds: 10, failureThreshold: 3 };
      Object.assign(d.spec ?? {}, { revisionHistoryLimit: 10, progressDeadlineSeconds: 600 });
      d.metadata.annotations = { 'deployment.kubernetes.io/revision': '1' };
    });
    server.modify<Service>(SVCS, 'shop', (s) => {
      Object.assign(s.spec ?? {}, { clusterIP: '10.0.0.12', type: 'ClusterIP', sessionAffinity: 'None' });
      const port = s.spec?.ports?.[0];
      if (port) port.protocol = 'TCP';
    });
    deploymentReady();
    await reconciler.reconcile(`${NS}/shop`); // status to Ready
    const before = server.writes().length;
    await reconciler.reconcile(`${NS}/shop`);
    expect(server.writes().length).to.equal(before);
  });

  it('reverts a scaled Deployment with one update of the replicas alone', async () => {
    await reconciler.reconcile(`${NS}/shop`);
    server.modify<Deployment>(DEPLOYS, 'shop', (d) => {
      if (d.spec) d.spec.replicas = 5;
      d.metadata.labels = { ...d.metadata.labels, team: 'web' };
    });
    const before = server.writes().length;
    await reconciler.reconcile(`${NS}/shop`);
    expect(writes().slice(before)).to.deep.equal([`PUT ${DEPLOYS}/shop`]);
    const d = server.read<Deployment>(DEPLOYS, 'shop') as Deployment;
    expect(d.spec?.replicas).to.equal(2);
    expect(d.metadata.labels?.team).to.equal('web');
    expect(events.events.at(-1)).to.include({ reason: 'Updated', message: 'Updated Deployment "shop"' });
  });

  it('reports a child that someone else controls, never adopting or overwriting it', async () => {
    server.seed<ConfigMap>(CMS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'shop', namespace: NS },
      data: { 'index.html': 'not ours' },
    });
    const error = await reconciler.reconcile(`${NS}/shop`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ReconcileProblem);
    expect(server.read<ConfigMap>(CMS, 'shop')?.data).to.deep.equal({ 'index.html': 'not ours' });
    expect(server.read<ConfigMap>(CMS, 'shop')?.metadata.ownerReferences).to.equal(undefined);
    expect(site().status?.conditions?.[0]).to.include({
      status: 'False',
      reason: 'ChildConflict',
      message:
        'ConfigMap "shop" already exists and is controlled by no controller, not by this StaticSite; it is left alone',
    });
    expect(events.events.find((e) => e.reason === 'ChildConflict')?.type).to.equal('Warning');
    expect(records.records.size).to.equal(0);
  });

  it('reports a failed record in status and retries', async () => {
    records.failPublish = new Error('disk full');
    const error = await reconciler.reconcile(`${NS}/shop`).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ReconcileProblem);
    expect(site().status?.conditions?.[0]).to.include({ reason: 'RecordFailed' });
    expect(events.events.find((e) => e.reason === 'RecordFailed')?.message).to.equal(
      'publishing the external record shop.web.sites.test failed: disk full',
    );
  });

  it('reports any other failed child write in status (ChildFailed) with the server’s own words', async () => {
    server.failNext((r) => r.method === 'POST' && r.path === SVCS, {
      status: 500,
      reason: 'InternalError',
      message: 'Internal error occurred: failed to allocate a serviceIP for Service "shop": range is full',
    });
    const error = await reconciler.reconcile(`${NS}/shop`).catch((e: unknown) => e);
    expect((error as { code?: number }).code).to.equal(500);
    expect(site().status?.conditions?.[0]).to.include({
      status: 'False',
      reason: 'ChildFailed',
      message:
        'Service "shop": Internal error occurred: failed to allocate a serviceIP for Service "shop": range is full',
    });
    // The pass stopped at the failed child: no claim, and the status written once, by the status step.
    expect(writes().filter((w) => w.startsWith(`POST ${CLAIMS}`))).to.deep.equal([]);
    expect(writes().filter((w) => w.endsWith('/status'))).to.deep.equal([`PUT ${SITES}/shop/status`]);
  });

  it('a 409 on a child update fails the reconcile (the queue retries with backoff) and emits a Warning', async () => {
    await reconciler.reconcile(`${NS}/shop`);
    server.modify<Deployment>(DEPLOYS, 'shop', (d) => {
      if (d.spec) d.spec.replicas = 7;
    });
    server.failNext((r) => r.method === 'PUT' && r.path === `${DEPLOYS}/shop`, { status: 409, reason: 'Conflict' });
    const before = writes().length;
    const error = await reconciler.reconcile(`${NS}/shop`).catch((e: unknown) => e);
    expect((error as { code?: number }).code).to.equal(409);
    expect(events.events.at(-1)).to.include({ type: 'Warning', reason: 'ReconcileError' });
    // A routine conflict leaves status alone: the retry re-reads.
    expect(writes().slice(before)).to.deep.equal([`PUT ${DEPLOYS}/shop`]);
    await reconciler.reconcile(`${NS}/shop`);
    expect(server.read<Deployment>(DEPLOYS, 'shop')?.spec?.replicas).to.equal(2);
  });

  it('finalizes a site being deleted: record removed, then only our finalizer removed', async () => {
    await reconciler.reconcile(`${NS}/shop`);
    server.modify<StaticSiteV1>(SITES, 'shop', (s) => {
      s.metadata.deletionTimestamp = '2026-11-29T12:10:00Z';
      s.metadata.finalizers = ['example.com/other', FINALIZER];
    });
    const before = server.writes().length;
    await reconciler.reconcile(`${NS}/shop`);
    expect(records.records.size).to.equal(0);
    expect(writes().slice(before)).to.deep.equal([
      `DELETE ${CLAIMS}/${claimName('shop.web.sites.test')}`,
      `PUT ${SITES}/shop`,
    ]);
    expect(server.list(CLAIMS)).to.deep.equal([]);
    expect(site().metadata.finalizers).to.deep.equal(['example.com/other']);
    expect(events.events.at(-1)).to.include({ type: 'Normal', reason: 'Finalized' });
  });

  it('keeps the finalizer when deleting the record fails, with a Warning event', async () => {
    await reconciler.reconcile(`${NS}/shop`);
    server.modify<StaticSiteV1>(SITES, 'shop', (s) => {
      s.metadata.deletionTimestamp = '2026-11-29T12:10:00Z';
    });
    records.failRemove = new Error('EACCES: permission denied');
    const error = await reconciler.reconcile(`${NS}/shop`).catch((e: unknown) => e);
    expect((error as Error).message).to.equal('EACCES: permission denied');
    expect(site().metadata.finalizers).to.deep.equal([FINALIZER]);
    expect(events.events.at(-1)).to.deep.include({
      type: 'Warning',
      reason: 'RecordDeleteFailed',
      message: 'deleting the external record failed: EACCES: permission denied',
    });
    records.failRemove = undefined;
    await reconciler.reconcile(`${NS}/shop`);
    expect(server.read(SITES, 'shop')).to.equal(undefined);
  });

  it('removes the record of a site that vanished', async () => {
    await reconciler.reconcile(`${NS}/shop`);
    server.remove(SITES, 'shop');
    await reconciler.reconcile(`${NS}/shop`);
    expect(records.records.size).to.equal(0);
  });

  it('a content change rolls the pods: the template hash annotation changes', async () => {
    await reconciler.reconcile(`${NS}/shop`);
    server.modify<StaticSiteV1>(SITES, 'shop', (s) => {
      s.spec.content = '<h1>v2</h1>';
    });
    await reconciler.reconcile(`${NS}/shop`);
    expect(server.read<ConfigMap>(CMS, 'shop')?.data?.['index.html']).to.equal('<h1>v2</h1>');
    expect(
      server.read<Deployment>(DEPLOYS, 'shop')?.spec?.template?.metadata?.annotations?.[
        'staticsite.dev/content-sha256'
      ],
    ).to.equal(createHash('sha256').update('<h1>v2</h1>').digest('hex'));
  });
});

describe('controller: reconcile reads its site from the informer cache', () => {
  let server: FakeApiServer;
  let cached: StaticSiteV1 | undefined;
  let reconciler: SiteReconciler;
  const gets = () => server.requests.filter((r) => r.method === 'GET' && r.path === `${SITES}/shop`).length;
  const stored = () => server.read<StaticSiteV1>(SITES, 'shop') as StaticSiteV1;

  beforeEach(() => {
    server = new FakeApiServer();
    cached = undefined;
    reconciler = reconcilerOn(server, { sites: { get: () => cached } });
  });

  it('uses the cached site, asks the API server while the cache is behind its own write, and never changes the cache', async () => {
    cached = stored();
    const before = structuredClone(cached);
    await reconciler.reconcile(`${NS}/shop`);
    expect(gets()).to.equal(0);
    expect(cached).to.deep.equal(before);
    // The cache still holds the site as it was before our finalizer and status writes: too old.
    await reconciler.reconcile(`${NS}/shop`);
    expect(gets()).to.equal(1);
    // Once the watch has delivered our last write, the cache is used again.
    cached = stored();
    const writes = server.writes().length;
    await reconciler.reconcile(`${NS}/shop`);
    expect(gets()).to.equal(1);
    expect(server.writes().length).to.equal(writes);
  });

  it('a site the cache does not have is read from the API server before anything is removed', async () => {
    await reconciler.reconcile(`${NS}/shop`);
    expect(gets()).to.equal(1);
    expect(stored().metadata.finalizers).to.deep.equal([FINALIZER]);
  });
});

/** A made-up child kind: as much of it as its readiness hook reads. */
interface Widget extends KubeObject {
  status?: { phase?: string; address?: string };
}

const WIDGETS: ResourceType = {
  group: 'widgets.example.com',
  version: 'v1',
  plural: 'widgets',
  kind: 'Widget',
  namespaced: true,
};
const WIDGETS_PATH = collectionPath(WIDGETS, NS);

/**
 * One registry entry, with a readiness hook: not ready until its phase is Ready; `unreachable`, the site's
 * hostname does not reach it through the widget until then; once Ready, it serves the site at its address.
 */
function widgetChild(unreachable: boolean): ChildKind<Widget> {
  return {
    type: WIDGETS,
    mutate: (object, site) => mutateMetadata(object, site),
    readiness(widget) {
      const phase = widget?.status?.phase;
      if (phase !== 'Ready') {
        const message = `Waiting for widget "${widget?.metadata.name}" (phase ${phase ?? 'none'})...`;
        return { ready: false, reason: 'WidgetPending', message, progressing: true, unreachable };
      }
      const address = widget?.status?.address;
      const via = address && {
        kind: 'Gateway' as const,
        name: 'infra/widgets',
        addresses: [{ type: 'IPAddress', value: address }],
      };
      return { ready: true, ...(via && { via }) };
    },
  };
}

describe('controller: Ready is what the registered kinds readiness hooks say', () => {
  let server: FakeApiServer;
  let records: MemoryRecords;
  const site = () => server.read<StaticSiteV1>(SITES, 'shop') as StaticSiteV1;
  const ready = () => site().status?.conditions?.find((c) => c.type === 'Ready');
  const conditions = () =>
    Object.fromEntries((site().status?.conditions ?? []).map((c) => [c.type, `${c.status} ${c.reason}`]));
  const deploymentReady = () =>
    server.modify<Deployment>(DEPLOYS, 'shop', (d) => {
      d.status = { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 };
    });
  const widgetPhase = (status: Widget['status']) =>
    server.modify<Widget>(WIDGETS_PATH, 'shop', (w) => {
      w.status = status;
    });
  const on = (unreachable: boolean) => {
    server = new FakeApiServer();
    records = new MemoryRecords();
    return reconcilerOn(server, { records, registry: [...CHILDREN, widgetChild(unreachable) as ChildKind] });
  };

  it("a new kind's hook holds Ready back with its reason, after the Deployment's rollout (registry order)", async () => {
    const reconciler = on(false);
    await reconciler.reconcile(`${NS}/shop`);
    expect(server.read<Widget>(WIDGETS_PATH, 'shop')?.metadata.labels).to.include({
      'app.kubernetes.io/managed-by': 'staticsite-controller',
    });
    // Both not ready, neither unreachable: the Deployment comes first in the registry.
    expect(ready()).to.include({ status: 'False', reason: 'RollingOut' });
    deploymentReady();
    await reconciler.reconcile(`${NS}/shop`);
    expect(ready()).to.include({
      status: 'False',
      reason: 'WidgetPending',
      message: 'Waiting for widget "shop" (phase none)...',
    });
    expect(conditions()).to.deep.equal({
      Ready: 'False WidgetPending',
      Progressing: 'True WidgetPending',
      Degraded: 'False AsExpected',
    });
    // Not `unreachable`: the name reaches the site, so the URL and the record are there.
    expect(site().status?.url).to.equal('http://shop.web.sites.test/');
    expect(records.records.get(`${NS}/shop`)?.hostname).to.equal('shop.web.sites.test');
    expect(site().status).not.to.have.property('observedGeneration');
    widgetPhase({ phase: 'Ready' });
    await reconciler.reconcile(`${NS}/shop`);
    expect(ready()).to.include({
      status: 'True',
      reason: 'Available',
      message: 'deployment "shop" successfully rolled out',
    });
    expect(site().status).to.deep.include({ observedGeneration: 1, readyReplicas: 2 });
  });

  it('an unreachable child goes before the rollout, hides the URL, holds the record back, then names where it serves', async () => {
    const reconciler = on(true);
    await reconciler.reconcile(`${NS}/shop`);
    expect(ready()).to.include({ status: 'False', reason: 'WidgetPending' });
    expect(site().status).not.to.have.property('url');
    expect(records.records.size).to.equal(0);
    deploymentReady();
    widgetPhase({ phase: 'Ready', address: '192.0.2.7' });
    await reconciler.reconcile(`${NS}/shop`);
    expect(ready()).to.include({ status: 'True', reason: 'Available' });
    expect(site().status?.url).to.equal('http://shop.web.sites.test/');
    expect(records.records.get(`${NS}/shop`)?.via).to.deep.equal({
      kind: 'Gateway',
      name: 'infra/widgets',
      addresses: [{ type: 'IPAddress', value: '192.0.2.7' }],
    });
  });
});
