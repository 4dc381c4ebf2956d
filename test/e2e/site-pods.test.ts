/**
 * The site pods the controller asks for pass the `restricted` Pod Security Standard as the real
 * API server's PodSecurity admission judges it: the Deployment it builds draws no warning in a
 * namespace that warns on `restricted`, and a pod of its template is admitted where `restricted`
 * is enforced. A control pod without the security settings is refused, so the check can fail.
 */
import { expect } from 'chai';
import type { StaticSiteV1 } from '../../api/index.ts';
import { DEFAULT_SITE_IMAGE, deploymentChild } from '../../controller/reconcile/children.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import type { Deployment } from '../../kube/objects.ts';
import { testCluster } from '../support/shared.ts';

const NS = 'restricted-sites';

function builtDeployment(): Deployment {
  const site: StaticSiteV1 = {
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: { name: 'shop', namespace: NS, uid: '6b1d7d2e-3c0a-4a57-9d0e-2f6f3f0b8a11' },
    spec: { content: '<h1>shop</h1>', replicas: 2, tier: 'prod', hostname: 'shop.example.com' },
  };
  const deployment: Deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'shop', namespace: NS },
  };
  deploymentChild.mutate(deployment, site, { image: DEFAULT_SITE_IMAGE });
  // Dry runs only: the owner need not exist.
  deployment.metadata.ownerReferences = [];
  return deployment;
}

describe('e2e: site pods pass the restricted Pod Security Standard (real PodSecurity admission)', function () {
  this.timeout(60_000);
  let cp: ControlPlane;

  before(async () => {
    ({ controlPlane: cp } = await testCluster());
    const res = await cp.admin.post('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: NS,
        labels: {
          'pod-security.kubernetes.io/enforce': 'restricted',
          'pod-security.kubernetes.io/warn': 'restricted',
        },
      },
    });
    expect([201, 409]).to.include(res.status);
  });

  it('the Deployment draws no PodSecurity warning and its pod is admitted', async () => {
    const deployment = builtDeployment();
    const created = await cp.admin.post(`/apis/apps/v1/namespaces/${NS}/deployments`, deployment, {
      query: { dryRun: 'All' },
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.warnings).to.deep.equal([]);
    const pod = await cp.admin.post(
      `/api/v1/namespaces/${NS}/pods`,
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'shop-pod' }, spec: deployment.spec?.template?.spec },
      { query: { dryRun: 'All' } },
    );
    expect(pod.status, pod.text).to.equal(201);
    expect(pod.warnings).to.deep.equal([]);
  });

  it('a pod without those settings is refused there (the control)', async () => {
    const spec = structuredClone(builtDeployment().spec?.template?.spec ?? {});
    delete spec.securityContext;
    for (const container of spec.containers ?? []) delete container.securityContext;
    const pod = await cp.admin.post<{ code: number; message: string }>(
      `/api/v1/namespaces/${NS}/pods`,
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bare-pod' }, spec },
      { query: { dryRun: 'All' } },
    );
    expect(pod.status).to.equal(403);
    expect(pod.body.message).to.match(/violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false/);
  });
});
