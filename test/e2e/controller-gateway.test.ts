/**
 * `staticsite controller --gateway`: an HTTPRoute per site, on a real control plane with Gateway API
 * v1.6.3's standard CRDs, the controller running as its ServiceAccount with the RBAC of
 * manifests/controller and manifests/overlays/gateway. No Gateway implementation runs here: the test
 * writes the route's status as a Gateway writes it (Accepted, ResolvedRefs), and the Gateway's
 * status.addresses, and checks what the controller makes of them: Ready, the URL, the record.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadAll } from 'js-yaml';
import type { CustomResourceDefinition } from '../../api/index.ts';
import { eventually, installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { thirdPartyModuleDir } from '../../devenv/third-party-crds.ts';
import { ExposureRun, ownedBy, readyOf } from '../support/exposure-harness.ts';
import { testCluster } from '../support/shared.ts';

const NS = 'gw-e2e';
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
  let run: ExposureRun;
  const gatewayCrds: string[] = [];

  const getRoute = async (name: string) => {
    const res = await run.cp.admin.get<Route>(`${ROUTES}/${name}`);
    return res.status === 200 ? res.body : undefined;
  };
  /** What a Gateway implementation writes on its Gateway once it has addresses. */
  const gatewayAt = async (...addresses: Array<{ type: string; value: string }>) => {
    const gateway = (await run.cp.admin.get<Route>(`${GATEWAYS}/public`)).body;
    const res = await run.cp.admin.put(`${GATEWAYS}/public/status`, { ...gateway, status: { addresses } });
    expect(res.status, res.text).to.equal(200);
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
    const res = await run.cp.admin.put(`${ROUTES}/${name}/status`, { ...route, status: { parents } });
    expect(res.status, res.text).to.equal(200);
  };

  before(async function () {
    this.timeout(600_000);
    const { controlPlane: cp } = await testCluster();
    const standard = join(await thirdPartyModuleDir('gateway-api'), 'config', 'crd', 'standard');
    for (const kind of ['gatewayclasses', 'gateways', 'httproutes']) {
      const text = await readFile(join(standard, `gateway.networking.k8s.io_${kind}.yaml`), 'utf8');
      const crd = loadAll(text)[0] as CustomResourceDefinition;
      await installCrd(cp.admin, crd);
      gatewayCrds.push(crd.metadata.name ?? '');
    }
    run = new ExposureRun(cp, { namespace: NS, system: 'gw-system', clusterRole: 'staticsite-controller-routes' });
    await cp.ensureNamespace(NS);
    const gateway = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'public', namespace: NS },
      spec: { gatewayClassName: 'example', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
    };
    expect((await cp.admin.post(GATEWAYS, gateway)).status).to.equal(201);
    await run.start(ROUTE_RBAC, ['--resync-period', '2s', '--gateway', `${NS}/public`]);
  });

  after(async function () {
    this.timeout(120_000);
    await run?.stop();
    for (const name of gatewayCrds) await uninstallCrd(run.cp.admin, name);
  });

  it('a site gets its route to the Gateway; Ready waits for the Gateway, then the URL is in status', async () => {
    const created = await run.createSite('hello', '<h1>hi</h1>');
    const route = await eventually('the HTTPRoute', () => getRoute('hello'));
    expect(route.metadata.ownerReferences).to.deep.include(ownedBy(created));
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
    const waiting = await run.readyWith('hello', 'RoutePending');
    expect(readyOf(waiting)).to.include({
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
    const noAddress = await run.readyWith('hello', 'RecordFailed');
    expect(readyOf(noAddress)?.message).to.equal(
      `publishing the external record hello.${NS}.sites.staticsite.dev failed: Gateway ${NS}/public has no IP address or hostname in status.addresses`,
    );
    expect(await run.readRecord('hello')).to.equal(undefined);
    const addresses = [{ type: 'IPAddress', value: '192.0.2.10' }];
    await gatewayAt(...addresses);
    const live = await run.converged('hello');
    expect(live.status?.url).to.equal(`http://hello.${NS}.sites.staticsite.dev/`);
    expect(await run.readRecord('hello')).to.deep.equal(recordOf('hello', addresses));
  });

  it("the Gateway's addresses change: the record follows", async () => {
    const addresses = [
      { type: 'IPAddress', value: '192.0.2.20' },
      { type: 'IPAddress', value: '2001:db8::20' },
    ];
    await gatewayAt(...addresses);
    await eventually(
      'the record at the new addresses',
      async () => JSON.stringify(await run.readRecord('hello')) === JSON.stringify(recordOf('hello', addresses)),
    );
  });

  it('a settled route is never written again; a changed one is put back', async () => {
    const before = (await getRoute('hello')) as Route;
    await new Promise((r) => setTimeout(r, 5_000)); // two resyncs
    const after = (await getRoute('hello')) as Route;
    expect(after.metadata.resourceVersion, 'no write to a settled route').to.equal(before.metadata.resourceVersion);
    const res = await run.cp.admin.patch(`${ROUTES}/hello`, { spec: { hostnames: ['elsewhere.example.com'] } });
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
    const refused = await run.readyWith('hello', 'RouteNotAccepted');
    expect(readyOf(refused)?.message).to.equal(
      `HTTPRoute "hello" is not accepted by Gateway ${NS}/public: NotAllowedByListeners: no listener allows routes from this namespace`,
    );
    expect(refused.status?.conditions?.find((c) => c.type === 'Degraded')?.status).to.equal('True');
    expect(refused.status?.url).to.equal(undefined);
  });

  it('deleting the site: its record goes, and the garbage collector removes its route', async () => {
    expect((await run.cp.admin.delete(`${run.sites}/hello`)).status).to.be.oneOf([200, 202]);
    await eventually('the record gone', async () => (await run.readRecord('hello')) === undefined, 90_000);
    await eventually('the route gone', async () => (await getRoute('hello')) === undefined, 90_000);
  });
});
