import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { load, loadAll } from 'js-yaml';
import type { StaticSiteV1 } from '../../api/index.ts';
import { CHILDREN, type ChildKind } from '../../controller/child-registry.ts';
import { HostnameClaims } from '../../controller/claims/hostname-claims.ts';
import { LeaseElector } from '../../controller/leader/lease-elector.ts';
import { MemoryEventRecorder } from '../../controller/observability/events.ts';
import { silentLogger } from '../../controller/observability/logger.ts';
import { controllerRules } from '../../controller/rbac.ts';
import type { ChildLookup } from '../../controller/reconcile/ensure.ts';
import { SiteReconciler } from '../../controller/reconcile/reconciler.ts';
import type { RecordStore } from '../../controller/records/record-store.ts';
import { KubeApi } from '../../kube/api-client.ts';
import type { ConfigMap, Deployment, KubeObject, Service } from '../../kube/objects.ts';
import { collectionPath } from '../../kube/resources.ts';
import { FakeApiServer, ManualClock, settle } from '../support/kube/index.ts';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

interface RbacDoc {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
}

async function yamlDocs<T>(file: string): Promise<T[]> {
  const text = await readFile(new URL(`../../${file}`, import.meta.url), 'utf8');
  return loadAll(text) as T[];
}

/** The controller's RBAC: the generated ClusterRole and the hand-written rest. */
async function rbac(): Promise<RbacDoc[]> {
  return [
    ...(await yamlDocs<RbacDoc>('manifests/controller/controller-clusterrole.yaml')),
    ...(await yamlDocs<RbacDoc>('manifests/controller/controller-rbac.yaml')),
  ];
}

/** The RBAC verb and group/resource of one REST call the controller made. */
function permissionOf(method: string, path: string): { verb: string; group: string; resource: string } {
  const parts = path.split('/').filter(Boolean);
  const group = parts[0] === 'api' ? '' : (parts[1] ?? '');
  const rest = parts[0] === 'api' ? parts.slice(2) : parts.slice(3);
  const tail = rest[0] === 'namespaces' ? rest.slice(2) : rest;
  const resource = tail.length === 3 ? `${tail[0]}/${tail[2]}` : (tail[0] ?? '');
  const named = tail.length >= 2;
  const verb = {
    GET: named ? 'get' : 'list',
    WATCH: 'watch',
    POST: 'create',
    PUT: 'update',
    PATCH: 'patch',
    DELETE: 'delete',
  }[method] as string;
  return { verb, group, resource };
}

describe('controller: RBAC manifest', () => {
  it('grants no wildcard, and delete only on Leases (the hostname claims) through a Role in its own namespace', async () => {
    const docs = await rbac();
    expect(docs.flatMap((d) => d.rules ?? []).length).to.be.greaterThan(0);
    for (const doc of docs) {
      for (const rule of doc.rules ?? []) {
        expect([...rule.verbs, ...rule.resources, ...rule.apiGroups]).not.to.include('*');
        expect(rule.verbs).not.to.include('deletecollection');
        if (rule.verbs.includes('delete')) {
          expect(doc.kind, doc.metadata.name).to.equal('Role');
          expect(doc.metadata.namespace).to.equal('staticsite-system');
          expect(rule.apiGroups).to.deep.equal(['coordination.k8s.io']);
          expect(rule.resources).to.deep.equal(['leases']);
        }
      }
    }
    // Leases are never granted cluster-wide.
    const clusterRules = docs.filter((d) => d.kind === 'ClusterRole').flatMap((d) => d.rules ?? []);
    expect(clusterRules.flatMap((r) => r.resources)).not.to.include('leases');
  });

  it('the ClusterRole grants exactly the rules the controller derives from its child registry (controller/rbac.ts)', async () => {
    const clusterRole = (await rbac()).find((d) => d.kind === 'ClusterRole');
    expect(clusterRole?.rules).to.deep.equal(controllerRules());
  });

  it('the single-namespace overlay grants the ClusterRole’s rules as a Role in the watched namespace, and no ClusterRole', async () => {
    const clusterRole = (await rbac()).find((d) => d.kind === 'ClusterRole');
    type Doc = RbacDoc & { roleRef?: { kind: string; name: string }; subjects?: unknown[] };
    const overlay = [
      ...(await yamlDocs<Doc>('manifests/overlays/single-namespace/controller-role.yaml')),
      ...(await yamlDocs<Doc>('manifests/overlays/single-namespace/namespaced-rbac.yaml')),
    ];
    const role = overlay.find((d) => d.kind === 'Role');
    expect(role?.rules).to.deep.equal(clusterRole?.rules);
    const binding = overlay.find((d) => d.kind === 'RoleBinding');
    expect(binding?.metadata.namespace).to.equal(role?.metadata.namespace);
    expect(binding?.roleRef).to.deep.equal({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: 'staticsite-controller',
    });
    expect(binding?.subjects).to.deep.equal([
      { kind: 'ServiceAccount', name: 'staticsite-controller', namespace: 'staticsite-system' },
    ]);
    const kustomization = await yamlDocs<{ patches: Array<{ path?: string; patch?: string }> }>(
      'manifests/overlays/single-namespace/kustomization.yaml',
    );
    const patches = kustomization[0]?.patches ?? [];
    expect(patches.map((p) => p.patch ?? '').join('\n')).to.include(`value: --namespace=${role?.metadata.namespace}`);
    const deleted = patches
      .filter((p) => p.patch?.startsWith('$patch: delete'))
      .map((p) => load(p.patch ?? '') as { $patch: string; kind: string; metadata: { name: string } });
    expect(deleted.map((d) => `${d.$patch} ${d.kind}/${d.metadata.name}`)).to.deep.equal([
      'delete ClusterRole/staticsite-controller',
      'delete ClusterRoleBinding/staticsite-controller',
    ]);
  });

  it('covers every call the controller makes, and grants nothing it never makes', async () => {
    const server = new FakeApiServer();
    const api = new KubeApi(server);
    const clock = new ManualClock();
    const NS = 'web';
    const cms = `/api/v1/namespaces/${NS}/configmaps`;
    const deploys = `/apis/apps/v1/namespaces/${NS}/deployments`;
    const svcs = `/api/v1/namespaces/${NS}/services`;
    const sites = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
    const records: RecordStore = { publish: async () => 'created', remove: async () => 'removed' };
    const leases = '/apis/coordination.k8s.io/v1/namespaces/sys/leases';
    const claims = new HostnameClaims({
      api,
      namespace: 'sys',
      cache: { get: (key) => server.read(leases, key.split('/')[1] ?? ''), list: () => server.list(leases) },
    });
    /** A reconciler whose child caches are `cacheOf` each kind. */
    const reconcilerWith = (cacheOf: (kind: ChildKind) => ChildLookup<KubeObject>) =>
      new SiteReconciler({
        api,
        children: CHILDREN.map((kind) => ({ kind, cache: cacheOf(kind) })),
        records,
        claims,
        events: new MemoryEventRecorder(),
        clock,
        logger: silentLogger(),
        config: { image: 'nginx', baseDomain: 'example.com' },
      });
    const reconciler = reconcilerWith(() => ({ get: () => undefined }));
    server.seed<StaticSiteV1>(sites, {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name: 'shop', namespace: NS },
      spec: { content: 'x' },
    });
    // The informers' list + watch of each resource.
    for (const path of [sites, ...CHILDREN.map((kind) => collectionPath(kind.type, NS))]) {
      await api.transport.request('GET', path);
      await api.transport.stream(path, {}, new AbortController().signal);
    }
    await reconciler.reconcile(`${NS}/shop`);
    await reconciler.reconcile(`${NS}/shop`); // the children exist: AlreadyExists -> get -> update path
    server.modify<Deployment>(deploys, 'shop', (d) => {
      if (d.spec) d.spec.replicas = 3;
    });
    server.modify<ConfigMap>(cms, 'shop', (c) => {
      c.data = {};
    });
    server.modify<Service>(svcs, 'shop', (s) => {
      if (s.spec) s.spec.selector = {};
    });
    const live = <T extends KubeObject>(path: string) => ({
      get: (k: string) => server.read<T>(path, k.split('/')[1] ?? ''),
    });
    await reconcilerWith((kind) => live(collectionPath(kind.type, NS))).reconcile(`${NS}/shop`);
    // Hostname claims: the informer's list + watch; a lost race (POST 409, GET the claim, GET the
    // holder); a stale claim (deleted with preconditions); the release at deletion.
    await api.transport.request('GET', leases);
    await api.transport.stream(leases, {}, new AbortController().signal);
    server.seed<StaticSiteV1>(sites, {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name: 'copy', namespace: NS },
      spec: { content: 'x', hostname: 'shop.web.example.com' },
    });
    await reconciler.reconcile(`${NS}/copy`);
    server.remove(sites, 'shop');
    await reconciler.reconcile(`${NS}/copy`);
    server.modify<StaticSiteV1>(sites, 'copy', (s) => {
      s.metadata.deletionTimestamp = '2026-11-29T12:10:00Z';
    });
    await reconciler.reconcile(`${NS}/copy`);
    expect(server.requests.filter((r) => r.method === 'DELETE').length).to.be.at.least(2);
    // Events: create, then patch to aggregate.
    await api.create({ group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true }, NS, {
      metadata: { name: 'e', namespace: NS },
    });
    await api.mergePatch({ group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true }, NS, 'e', {
      patch: { count: 2 },
    });
    // Leader election: create, then get + update.
    const stop = new AbortController();
    const elector = new LeaseElector({
      api,
      clock,
      logger: silentLogger(),
      namespace: 'sys',
      name: 'staticsite-controller',
      identity: 'a',
    });
    const run = elector.run(stop.signal, async () => {});
    await settle();
    await elector.tryAcquireOrRenew();
    stop.abort();
    await run;

    const made = new Set(
      server.requests.map((r) => {
        const p = permissionOf(r.method, r.path);
        return `${p.group}|${p.resource}|${p.verb}`;
      }),
    );
    const docs = await rbac();
    const granted = new Set(
      docs
        .flatMap((d) => d.rules ?? [])
        .flatMap((rule) =>
          rule.apiGroups.flatMap((g) => rule.resources.flatMap((res) => rule.verbs.map((v) => `${g}|${res}|${v}`))),
        ),
    );
    for (const call of made) expect(granted, `granted ${call}`).to.include(call);
    // staticsites/finalizers update is what OwnerReferencesPermissionEnforcement checks for blockOwnerDeletion.
    const unused = [...granted].filter((g) => !made.has(g));
    expect(unused).to.deep.equal(['staticsite.dev|staticsites/finalizers|update']);
  });
});
