/**
 * `kubectl apply -k manifests` (the base, unchanged) on a control plane with a real node: the
 * kubelet, kube-proxy and containerd on this machine run our image and the site image as real,
 * non-privileged pods. The Deployments roll out with the shipped securityContexts, the cert
 * bootstrapper pod injects the CA, the API server calls the webhook pods through their Service,
 * and a StaticSite in a namespace that enforces the `restricted` Pod Security Standard gets nginx
 * pods whose Service serves its HTML to the host.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually } from '../../devenv/crds.ts';
import { packageFile } from '../../devenv/package-root.ts';
import { defaultRouteAddress, RealNode, realNodeImages } from '../../devenv/real-node.ts';
import { buildImages, operatorImage } from '../support/docker.ts';

const NS = 'web';
const SYSTEM = 'staticsite-system';
const sites = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;

interface Site {
  metadata: { finalizers?: string[]; generation?: number };
  status?: { observedGeneration?: number; conditions?: Array<{ type: string; status: string; reason?: string }> };
}

/** The external records the controller pods wrote, read from their emptyDir volumes on the node. */
async function recordFiles(node: RealNode): Promise<string[]> {
  const pods = join(node.dir, 'kubelet', 'pods');
  const found: string[] = [];
  for (const uid of await readdir(pods).catch(() => [])) {
    const records = join(pods, uid, 'volumes', 'kubernetes.io~empty-dir', 'records');
    for (const file of await readdir(records).catch(() => [])) found.push(join(records, file));
  }
  return found;
}

describe('e2e: kubectl apply -k manifests on a real node (kubelet, kube-proxy, containerd)', function () {
  this.timeout(300_000);
  let cp: ControlPlane;
  let node: RealNode;

  before(async function () {
    this.timeout(45 * 60_000);
    const image = await buildImages();
    expect(image).to.equal(operatorImage());
    cp = await new ControlPlane({ nodeAddress: defaultRouteAddress() }).start();
    // Our image, and the local build of the unprivileged nginx under the name the controller asks for.
    node = await RealNode.start({ controlPlane: cp, images: realNodeImages() });
  });

  after(async function () {
    this.timeout(180_000);
    await node?.stop();
    await cp?.stop();
  });

  it('kubectl apply -k manifests: the three Deployments roll out with the shipped securityContexts', async () => {
    const applied = await cp.kubectl(['apply', '-k', packageFile('manifests')]);
    expect(applied.code, applied.stderr).to.equal(0);
    const rollout = await cp.kubectl([
      '-n',
      SYSTEM,
      'rollout',
      'status',
      'deployment/staticsite-certs',
      'deployment/staticsite-webhook',
      'deployment/staticsite-controller',
      '--timeout=240s',
    ]);
    expect(rollout.code, `${rollout.stdout}${rollout.stderr}`).to.equal(0);
    const pods = await cp.admin.get<{
      items: Array<{
        spec: { nodeName?: string; securityContext?: { runAsNonRoot?: boolean } };
        status: { phase: string };
      }>;
    }>(`/api/v1/namespaces/${SYSTEM}/pods`);
    const running = pods.body.items.filter((p) => p.status.phase === 'Running');
    expect(running.length).to.equal(5);
    for (const pod of running) {
      expect(pod.spec.nodeName).to.equal(node.name);
      expect(pod.spec.securityContext?.runAsNonRoot).to.equal(true);
    }
  });

  it('the cert bootstrapper pod injected the CA and the API server calls the webhook pods through the Service', async () => {
    const config = await cp.admin.get<{ webhooks: Array<{ clientConfig: { caBundle?: string; service?: unknown } }> }>(
      '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/staticsite-webhook',
    );
    expect(config.body.webhooks[0]?.clientConfig.service).to.not.equal(undefined);
    expect(Buffer.from(config.body.webhooks[0]?.clientConfig.caBundle ?? '', 'base64').toString()).to.include(
      'BEGIN CERTIFICATE',
    );
    await cp.ensureNamespace(NS);
    // The finalizer comes only from the mutating webhook: its presence proves the call went through.
    const dryRun = await cp.admin.post<Site>(
      sites,
      { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', metadata: { name: 'probe' }, spec: { content: 'x' } },
      { query: { dryRun: 'All' } },
    );
    expect(dryRun.status, JSON.stringify(dryRun.body)).to.equal(201);
    expect(dryRun.body.metadata.finalizers).to.deep.equal(['staticsite.dev/external-record']);
  });

  describe('a StaticSite in a namespace that enforces the restricted Pod Security Standard', () => {
    let clusterIp = '';

    before(async () => {
      const labelled = await cp.admin.patch(
        `/api/v1/namespaces/${NS}`,
        { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } },
        { contentType: 'application/merge-patch+json' },
      );
      expect(labelled.status, labelled.text).to.equal(200);
    });

    it('gets real nginx pods, and a GET on its Service from the host returns its HTML', async () => {
      const created = await cp.admin.post<Site>(sites, {
        apiVersion: 'staticsite.dev/v1',
        kind: 'StaticSite',
        metadata: { name: 'shop' },
        spec: { content: '<h1>shop v1</h1>', replicas: 2 },
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      await eventually(
        'the site Ready',
        async () => {
          const site = await cp.admin.get<Site>(`${sites}/shop`);
          return site.body.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        },
        180_000,
      );
      const service = await cp.admin.get<{ spec: { clusterIP: string } }>(`/api/v1/namespaces/${NS}/services/shop`);
      clusterIp = service.body.spec.clusterIP;
      const body = await eventually(
        'the Service serving',
        async () => {
          const res = await fetch(`http://${clusterIp}/`, { signal: AbortSignal.timeout(2_000) }).catch(
            () => undefined,
          );
          return res?.status === 200 ? res.text() : undefined;
        },
        30_000,
      );
      expect(body).to.equal('<h1>shop v1</h1>');
      const records = await recordFiles(node);
      const record = records.find((f) => f.endsWith(`${NS}_shop.json`));
      expect(record, records.join(', ')).to.not.equal(undefined);
      expect(JSON.parse(await readFile(record ?? '', 'utf8'))).to.deep.include({
        service: `shop.${NS}.svc.cluster.local`,
      });
    });

    it('serves edited content within 30 s', async () => {
      const patched = await cp.admin.patch(
        `${sites}/shop`,
        { spec: { content: '<h1>shop v2</h1>' } },
        { contentType: 'application/merge-patch+json' },
      );
      expect(patched.status, patched.text).to.equal(200);
      const started = Date.now();
      await eventually(
        'the new HTML served',
        async () => {
          const res = await fetch(`http://${clusterIp}/`, { signal: AbortSignal.timeout(2_000) }).catch(
            () => undefined,
          );
          return res?.status === 200 && (await res.text()) === '<h1>shop v2</h1>';
        },
        30_000,
      );
      expect(Date.now() - started).to.be.lessThan(30_000);
    });

    it('deleting the site removes its record and its children', async () => {
      const deleted = await cp.admin.delete(`${sites}/shop`);
      expect([200, 202]).to.include(deleted.status);
      await eventually(
        'the site, its children and its record gone',
        async () => {
          const [site, deployment, service, configMap] = await Promise.all([
            cp.admin.get(`${sites}/shop`),
            cp.admin.get(`/apis/apps/v1/namespaces/${NS}/deployments/shop`),
            cp.admin.get(`/api/v1/namespaces/${NS}/services/shop`),
            cp.admin.get(`/api/v1/namespaces/${NS}/configmaps/shop`),
          ]);
          const records = (await recordFiles(node)).filter((f) => f.endsWith(`${NS}_shop.json`));
          return [site, deployment, service, configMap].every((r) => r.status === 404) && records.length === 0;
        },
        120_000,
      );
    });
  });
});
