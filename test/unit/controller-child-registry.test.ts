import { expect } from 'chai';
import type { StaticSiteV1 } from '../../api/index.ts';
import { CHILDREN, type ChildKind } from '../../controller/child-registry.ts';
import type { ControllerManager } from '../../controller/manager.ts';
import { ControllerMetrics } from '../../controller/observability/metrics.ts';
import { controllerRules } from '../../controller/rbac.ts';
import { childLabels } from '../../controller/reconcile/children.ts';
import { setControllerReference } from '../../controller/reconcile/ownership.ts';
import type { RecordStore } from '../../controller/records/record-store.ts';
import { requiredPermissions } from '../../controller/startup-checks.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { collectionPath, type ResourceType } from '../../kube/resources.ts';
import { Probes } from '../../observability/probes-server.ts';
import { FakeApiServer, ManualClock } from '../support/kube/index.ts';
import { type RunningManager, startManager } from './controller-fixtures.ts';

const NS = 'web';
const SITES = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;

/** A PodDisruptionBudget, as much of it as the fake child sets. */
interface PodDisruptionBudget extends KubeObject {
  spec?: { minAvailable?: number; selector?: { matchLabels?: Record<string, string> } };
}

const PDBS: ResourceType = {
  group: 'policy',
  version: 'v1',
  plural: 'poddisruptionbudgets',
  kind: 'PodDisruptionBudget',
  namespaced: true,
};
const PDB_PATH = collectionPath(PDBS, NS);

/** A fourth child kind: its builder and its one registry entry, nothing else. */
const pdbChild: ChildKind<PodDisruptionBudget> = {
  type: PDBS,
  mutate(object, site) {
    object.metadata.labels = { ...(object.metadata.labels ?? {}), ...childLabels(site) };
    setControllerReference(object, site);
    object.spec = { ...object.spec, minAvailable: 1, selector: { matchLabels: { site: site.metadata.name ?? '' } } };
  },
};
const REGISTRY = [...CHILDREN, pdbChild];

describe('controller: the child registry (one entry per child kind)', () => {
  let clock: ManualClock;
  let server: FakeApiServer;
  let manager: ControllerManager;
  let running: RunningManager;
  let metrics: ControllerMetrics;
  const records: RecordStore = { publish: async () => 'created', remove: async () => 'absent' };

  beforeEach(async () => {
    clock = new ManualClock();
    server = new FakeApiServer();
    metrics = new ControllerMetrics();
    server.seed<StaticSiteV1>(SITES, {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name: 'shop', namespace: NS },
      spec: { content: 'shop', replicas: 1 },
    });
    running = await startManager(server, {
      namespace: NS,
      clock,
      metrics,
      records,
      resyncPeriodMs: 0,
      children: REGISTRY,
    });
    manager = running.manager;
  });

  afterEach(() => running.stop());

  const pdb = () => server.read<PodDisruptionBudget>(PDB_PATH, 'shop');

  it('ensures the new kind: created with our label and controller reference, after the three built-in children', () => {
    const site = server.read<StaticSiteV1>(SITES, 'shop') as StaticSiteV1;
    expect(pdb()?.spec).to.deep.equal({ minAvailable: 1, selector: { matchLabels: { site: 'shop' } } });
    expect(pdb()?.metadata.labels).to.include({ 'app.kubernetes.io/managed-by': 'staticsite-controller' });
    expect(pdb()?.metadata.ownerReferences?.[0]).to.include({ kind: 'StaticSite', uid: site.metadata.uid });
    const creates = server.writes().filter((r) => r.method === 'POST' && !r.path.includes('/leases'));
    expect(creates.map((r) => r.path.split('/').pop())).to.deep.equal([
      'configmaps',
      'deployments',
      'services',
      'poddisruptionbudgets',
    ]);
  });

  it('watches the new kind (labelled, with its readiness check) and maps its events to the owning site', async () => {
    const watches = server.requests.filter((r) => r.method === 'WATCH' && r.path === PDB_PATH);
    expect(watches.map((r) => r.query?.labelSelector)).to.deep.equal([
      'app.kubernetes.io/managed-by=staticsite-controller',
    ]);
    expect(new Probes({ ready: manager.readiness() }).answer('/readyz?verbose')?.body).to.include(
      '[+]informer-poddisruptionbudgets ok\n',
    );
    // Someone else's change is reverted through the owner; a deletion re-queues it, and it is recreated.
    server.modify<PodDisruptionBudget>(PDB_PATH, 'shop', (p) => {
      if (p.spec) p.spec.minAvailable = 5;
    });
    await clock.advance(0);
    expect(pdb()?.spec?.minAvailable).to.equal(1);
    const uid = pdb()?.metadata.uid;
    server.remove(PDB_PATH, 'shop');
    await clock.advance(0);
    expect(pdb()?.metadata.uid).to.not.equal(undefined);
    expect(pdb()?.metadata.uid).to.not.equal(uid);
  });

  it('the echoes of its own writes, to the new kind too, queue nothing: one reconcile in all', async () => {
    await clock.advance(0);
    const total = await metrics.registry.getSingleMetric('controller_runtime_reconcile_total')?.get();
    expect(total?.values.reduce((sum, v) => sum + v.value, 0)).to.equal(1);
  });

  it('appears in the RBAC rules and in the permissions checked at start-up', () => {
    const verbs = ['get', 'list', 'watch', 'create', 'update'];
    expect(controllerRules(REGISTRY)).to.deep.include({
      apiGroups: ['policy'],
      resources: ['poddisruptionbudgets'],
      verbs,
    });
    expect(controllerRules(CHILDREN).flatMap((r) => r.resources)).not.to.include('poddisruptionbudgets');
    const checked = requiredPermissions({
      namespace: NS,
      claimsNamespace: 'staticsite-system',
      createClaimsNamespace: false,
      children: REGISTRY,
    })
      .filter((p) => p.type === PDBS)
      .map((p) => `${p.verb} ${p.namespace}`);
    expect(checked).to.deep.equal(verbs.map((v) => `${v} ${NS}`));
  });
});
