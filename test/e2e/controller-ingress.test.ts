/**
 * `staticsite controller --ingress-class`: an Ingress per site, on a real control plane, the
 * controller running as its ServiceAccount with the RBAC of manifests/controller and
 * manifests/overlays/ingress. No ingress controller runs here: the test writes the Ingress's
 * status.loadBalancer as one writes it and checks what the controller makes of it: Ready, the URL,
 * the record. (test/e2e/real-node.test.ts runs Traefik's Ingress provider on the real node.)
 */
import { expect } from 'chai';
import { eventually } from '../../devenv/crds.ts';
import { ExposureRun, ownedBy, readyOf } from '../support/exposure-harness.ts';
import { testCluster } from '../support/shared.ts';

const NS = 'ing-e2e';
const INGRESSES = `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`;
const INGRESS_RBAC = new URL('../../manifests/overlays/ingress/controller-ingress-rbac.yaml', import.meta.url);

interface IngressObject {
  metadata: { name: string; ownerReferences?: Array<Record<string, unknown>> };
  spec: Record<string, unknown>;
}

describe('e2e: the controller with --ingress-class owns an Ingress per site (real control plane)', function () {
  this.timeout(180_000);
  let run: ExposureRun;

  const getIngress = async (name: string) => {
    const res = await run.cp.admin.get<IngressObject>(`${INGRESSES}/${name}`);
    return res.status === 200 ? res.body : undefined;
  };

  before(async function () {
    this.timeout(600_000);
    const { controlPlane } = await testCluster();
    run = new ExposureRun(controlPlane, {
      namespace: NS,
      system: 'ing-system',
      clusterRole: 'staticsite-controller-ingresses',
    });
    await run.start(INGRESS_RBAC, ['--ingress-class', 'public']);
  });

  after(async function () {
    this.timeout(120_000);
    await run?.stop();
  });

  it('a site gets its Ingress; Ready, the URL and the record wait for an address, then point at it', async () => {
    const created = await run.createSite('hello', '<h1>hi</h1>');
    const ingress = await eventually('the Ingress', () => getIngress('hello'));
    expect(ingress.metadata.ownerReferences).to.deep.include(ownedBy(created));
    const host = `hello.${NS}.sites.staticsite.dev`;
    expect(ingress.spec).to.deep.equal({
      ingressClassName: 'public',
      rules: [
        {
          host,
          http: {
            paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'hello', port: { number: 80 } } } }],
          },
        },
      ],
    });
    const waiting = await run.readyWith('hello', 'IngressPending');
    expect(readyOf(waiting)).to.include({
      status: 'False',
      message: 'Waiting for the ingress controller of class "public" to report an address for Ingress "hello"...',
    });
    expect(waiting.status?.url).to.equal(undefined);
    expect(await run.readRecord('hello')).to.equal(undefined);

    // What an ingress controller writes once it serves the Ingress.
    const live = (await getIngress('hello')) as IngressObject;
    const loadBalancer = { ingress: [{ ip: '192.0.2.30' }] };
    const res = await run.cp.admin.put(`${INGRESSES}/hello/status`, { ...live, status: { loadBalancer } });
    expect(res.status, res.text).to.equal(200);
    const served = await run.converged('hello');
    expect(served.status?.url).to.equal(`http://${host}/`);
    expect(await run.readRecord('hello')).to.deep.equal({
      hostname: host,
      service: `hello.${NS}.svc.cluster.local`,
      port: 80,
      site: `${NS}/hello`,
      via: { kind: 'Ingress', name: `${NS}/hello`, addresses: [{ type: 'IPAddress', value: '192.0.2.30' }] },
    });
  });

  it('deleting the site: its record goes, and the garbage collector removes its Ingress', async () => {
    expect((await run.cp.admin.delete(`${run.sites}/hello`)).status).to.be.oneOf([200, 202]);
    await eventually('the record gone', async () => (await run.readRecord('hello')) === undefined, 90_000);
    await eventually('the Ingress gone', async () => (await getIngress('hello')) === undefined, 90_000);
  });
});
