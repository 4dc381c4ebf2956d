/**
 * `staticsite controller --gateway`: an HTTPRoute per site, on a real control plane with Gateway API
 * v1.6.3's standard CRDs, the controller running as its ServiceAccount with the RBAC of
 * manifests/controller and manifests/overlays/gateway. No Gateway implementation runs here: the test
 * writes the route's status as a Gateway writes it (Accepted, ResolvedRefs), and the Gateway's
 * status.addresses, and checks what the controller makes of them: Ready, the URL, the record.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import type { CustomResourceDefinition } from '../../api/index.ts';
import { buildCrd, CRD_NAME } from '../../api/index.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { thirdPartyModuleDir } from '../../devenv/third-party-crds.ts';
import { applyControllerRbac, ControllerProcess, removeControllerRbac } from '../support/controller-harness.ts';
import { testCluster } from '../support/shared.ts';

const NS = 'gw-e2e';
const SYS = 'gw-system';
const SITES = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
const ROUTES = `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes`;
const GATEWAYS = `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/gateways`;
const ROUTE_RBAC = new URL('../../manifests/overlays/gateway/controller-routes-rbac.yaml', import.meta.url);
const PARENT = { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: NS, name: 'public' };

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}
interface Site {
  metadata: { name: string; uid: string; generation: number };
  status?: { url?: string; observedGeneration?: number; conditions?: Condition[] };
}
interface Route {
  metadata: {
    name: string;
    generation: number;
    resourceVersion: string;
    ownerReferences?: Array<{ kind: string; name: string; uid: string; controller?: boolean }>;
  };
  spec: Record<string, unknown>;
  status?: Record<string, unknown>;
}

describe('e2e: the controller with --gateway owns an HTTPRoute per site (real control plane, Gateway API CRDs)', function () {
  this.timeout(180_000);
  let cp: ControlPlane;
  let controller: ControllerProcess;
  let recordsDir: string;
  let logDir: string;
  const gatewayCrds: string[] = [];

  const getSite = async (name: string) => (await cp.admin.get<Site>(`${SITES}/${name}`)).body;
  const ready = (s: Site | undefined) => s?.status?.conditions?.find((c) => c.type === 'Ready');
  const getRoute = async (name: string) => {
    const res = await cp.admin.get<Route>(`${ROUTES}/${name}`);
    return res.status === 200 ? res.body : undefined;
  };
  /** What a Gateway implementation writes on its Gateway once it has addresses. */
  const gatewayAt = async (...addresses: Array<{ type: string; value: string }>) => {
    const gateway = (await cp.admin.get<Route>(`${GATEWAYS}/public`)).body;
    const res = await cp.admin.put(`${GATEWAYS}/public/status`, { ...gateway, status: { addresses } });
    expect(res.status, res.text).to.equal(200);
  };
  const readRecord = async (name: string) => {
    try {
      return JSON.parse(await readFile(join(recordsDir, `${NS}_${name}.json`), 'utf8')) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  };
  const recordOf = (name: string, addresses: Array<{ type: string; value: string }>) => ({
    hostname: `${name}.${NS}.sites.staticsite.dev`,
    service: `${name}.${NS}.svc.cluster.local`,
    port: 80,
    site: `${NS}/${name}`,
    via: { kind: 'Gateway', name: `${NS}/public`, addresses },
  });

  /** What a Gateway implementation writes on the route it processed. */
  const gatewaySays = async (name: string, accepted: Condition, resolved?: Condition) => {
    const route = (await getRoute(name)) as Route;
    const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const condition = (c: Condition) => ({
      ...c,
      observedGeneration: route.metadata.generation,
      lastTransitionTime: at,
    });
    const parents = [
      {
        parentRef: PARENT,
        controllerName: 'example.net/gateway-controller',
        conditions: [condition(accepted), ...(resolved ? [condition(resolved)] : [])],
      },
    ];
    const res = await cp.admin.put(`${ROUTES}/${name}/status`, { ...route, status: { parents } });
    expect(res.status, res.text).to.equal(200);
  };

  before(async function () {
    this.timeout(600_000);
    ({ controlPlane: cp } = await testCluster());
    await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
    const standard = join(await thirdPartyModuleDir('gateway-api'), 'config', 'crd', 'standard');
    for (const kind of ['gatewayclasses', 'gateways', 'httproutes']) {
      const text = await readFile(join(standard, `gateway.networking.k8s.io_${kind}.yaml`), 'utf8');
      const crd = parseAllDocuments(text)[0]?.toJS() as CustomResourceDefinition;
      await installCrd(cp.admin, crd);
      gatewayCrds.push(crd.metadata.name ?? '');
    }
    await cp.ensureNamespace(NS);
    await applyControllerRbac(cp, SYS);
    const routeRbac = (await readFile(ROUTE_RBAC, 'utf8')).replaceAll(
      'namespace: staticsite-system',
      `namespace: ${SYS}`,
    );
    const applied = await cp.kubectl(['apply', '-f', '-'], routeRbac);
    expect(applied.code, applied.stderr).to.equal(0);
    const gateway = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'public', namespace: NS },
      spec: { gatewayClassName: 'example', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
    };
    expect((await cp.admin.post(GATEWAYS, gateway)).status).to.equal(201);
    recordsDir = await mkdtemp(join(tmpdir(), 'gw-records-'));
    logDir = await mkdtemp(join(tmpdir(), 'gw-logs-'));
    const creds = await cp.serviceAccountCredentials(SYS, 'staticsite-controller');
    const kubeconfig = await cp.writeKubeconfig('gw-controller.kubeconfig', creds, 'gw-controller');
    controller = await ControllerProcess.start({
      controlPlane: cp,
      identity: 'gw',
      kubeconfig,
      logDir,
      args: [
        '--namespace',
        NS,
        '--claims-namespace',
        SYS,
        '--records-dir',
        recordsDir,
        '--resync-period',
        '2s',
        '--gateway',
        `${NS}/public`,
      ],
    });
    await eventually('controller /readyz', async () => (await controller.probe('/readyz')) === 200, 30_000);
  });

  after(async function () {
    this.timeout(120_000);
    await controller?.stop();
    const left = await cp.admin.get<{ items: Site[] }>(SITES);
    for (const s of left.body?.items ?? []) {
      await cp.admin.patch(`${SITES}/${s.metadata.name}`, { metadata: { finalizers: null } });
    }
    await cp.admin.delete(`/api/v1/namespaces/${NS}`);
    await uninstallCrd(cp.admin, CRD_NAME);
    for (const name of gatewayCrds) await uninstallCrd(cp.admin, name);
    await cp.kubectl([
      'delete',
      '--ignore-not-found',
      'clusterrole,clusterrolebinding',
      'staticsite-controller-routes',
    ]);
    await removeControllerRbac(cp, SYS);
    await rm(recordsDir, { recursive: true, force: true });
    if (!process.env.KEEP_CONTROLLER_LOGS) await rm(logDir, { recursive: true, force: true });
    else process.stderr.write(`controller logs: ${logDir}\n`);
  });

  it('a site gets its route to the Gateway; Ready waits for the Gateway, then the URL is in status', async () => {
    const site = { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', metadata: { name: 'hello', namespace: NS } };
    const created = await cp.admin.post<Site>(SITES, { ...site, spec: { content: '<h1>hi</h1>', replicas: 1 } });
    expect(created.status, created.text).to.equal(201);
    const route = await eventually('the HTTPRoute', () => getRoute('hello'));
    expect(route.metadata.ownerReferences).to.deep.include({
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      name: 'hello',
      uid: created.body.metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    });
    expect(route.spec).to.deep.equal({
      parentRefs: [PARENT],
      hostnames: [`hello.${NS}.sites.staticsite.dev`],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          backendRefs: [{ group: '', kind: 'Service', name: 'hello', port: 80, weight: 1 }],
        },
      ],
    });
    const waiting = await eventually('Ready=False RoutePending', async () => {
      const s = await getSite('hello');
      return ready(s)?.reason === 'RoutePending' ? s : undefined;
    });
    expect(ready(waiting)).to.include({
      status: 'False',
      message: `Waiting for Gateway ${NS}/public to accept HTTPRoute "hello"...`,
    });
    expect(waiting.status?.url, 'no URL while nothing serves the name').to.equal(undefined);

    await gatewaySays(
      'hello',
      { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'Route is accepted' },
      { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: 'Resolved all the Object references' },
    );
    // Accepted, but the Gateway has no address yet: nothing to point the name at.
    const noAddress = await eventually('Ready=False RecordFailed', async () => {
      const s = await getSite('hello');
      return ready(s)?.reason === 'RecordFailed' ? s : undefined;
    });
    expect(ready(noAddress)?.message).to.equal(
      `publishing the external record hello.${NS}.sites.staticsite.dev failed: Gateway ${NS}/public has no IP address or hostname in status.addresses`,
    );
    expect(await readRecord('hello')).to.equal(undefined);
    const addresses = [{ type: 'IPAddress', value: '192.0.2.10' }];
    await gatewayAt(...addresses);
    const live = await eventually(
      'Ready=True',
      async () => {
        const s = await getSite('hello');
        return ready(s)?.status === 'True' && s.status?.observedGeneration === s.metadata.generation ? s : undefined;
      },
      90_000,
    );
    expect(live.status?.url).to.equal(`http://hello.${NS}.sites.staticsite.dev/`);
    expect(await readRecord('hello')).to.deep.equal(recordOf('hello', addresses));
  });

  it("the Gateway's addresses change: the record follows", async () => {
    const addresses = [
      { type: 'IPAddress', value: '192.0.2.20' },
      { type: 'IPAddress', value: '2001:db8::20' },
    ];
    await gatewayAt(...addresses);
    await eventually(
      'the record at the new addresses',
      async () => JSON.stringify(await readRecord('hello')) === JSON.stringify(recordOf('hello', addresses)),
    );
  });

  it('a settled route is never written again; a changed one is put back', async () => {
    const before = (await getRoute('hello')) as Route;
    await new Promise((r) => setTimeout(r, 5_000)); // two resyncs
    const after = (await getRoute('hello')) as Route;
    expect(after.metadata.resourceVersion, 'no write to a settled route').to.equal(before.metadata.resourceVersion);
    const res = await cp.admin.patch(`${ROUTES}/hello`, { spec: { hostnames: ['elsewhere.example.com'] } });
    expect(res.status, res.text).to.equal(200);
    await eventually('the hostname put back', async () => {
      const r = await getRoute('hello');
      return JSON.stringify(r?.spec.hostnames) === JSON.stringify([`hello.${NS}.sites.staticsite.dev`]);
    });
  });

  it("a route the Gateway refuses: Ready=False with the Gateway's reason and message, no URL", async () => {
    await gatewaySays('hello', {
      type: 'Accepted',
      status: 'False',
      reason: 'NotAllowedByListeners',
      message: 'no listener allows routes from this namespace',
    });
    const refused = await eventually('Ready=False RouteNotAccepted', async () => {
      const s = await getSite('hello');
      return ready(s)?.reason === 'RouteNotAccepted' ? s : undefined;
    });
    expect(ready(refused)?.message).to.equal(
      `HTTPRoute "hello" is not accepted by Gateway ${NS}/public: NotAllowedByListeners: no listener allows routes from this namespace`,
    );
    expect(refused.status?.conditions?.find((c) => c.type === 'Degraded')?.status).to.equal('True');
    expect(refused.status?.url).to.equal(undefined);
  });

  it('deleting the site: its record goes, and the garbage collector removes its route', async () => {
    expect((await cp.admin.delete(`${SITES}/hello`)).status).to.be.oneOf([200, 202]);
    await eventually('the record gone', async () => (await readRecord('hello')) === undefined, 90_000);
    await eventually('the route gone', async () => (await getRoute('hello')) === undefined, 90_000);
  });
});
