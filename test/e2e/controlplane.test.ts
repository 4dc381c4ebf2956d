import { expect } from 'chai';
import { buildCrd } from '../../api/index.ts';
import { crdYaml } from '../../cli/crd-yaml.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { KubeHttp } from '../../devenv/kube-http.ts';
import type { NodeSimulator } from '../../devenv/node-simulator.ts';
import { testCluster } from '../support/shared.ts';

const NS = 'cp-e2e';
const sites = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;

function site(name: string, spec: Record<string, unknown>) {
  return { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', metadata: { name, namespace: NS }, spec };
}

describe('e2e: the control plane built from Go modules', function () {
  this.timeout(180_000);
  let cp: ControlPlane;
  let nodes: NodeSimulator;

  before(async () => {
    ({ controlPlane: cp, nodes } = await testCluster());
    await cp.ensureNamespace(NS);
  });

  it('installs the generated CRD (conversion webhook included) and it becomes Established', async () => {
    await installCrd(cp.admin, buildCrd());
    const res = await cp.admin.get<{ spec: { conversion: { strategy: string } } }>(
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/staticsites.staticsite.dev',
    );
    expect(res.body.spec.conversion.strategy).to.equal('Webhook');
    await uninstallCrd(cp.admin, 'staticsites.staticsite.dev');
  });

  it('kubectl create --dry-run=client accepts `staticsite crd` output', async () => {
    const result = await cp.kubectl(['create', '--dry-run=client', '-o', 'name', '-f', '-'], crdYaml(buildCrd()));
    expect(result.stderr).to.equal('');
    expect(result.stdout.trim()).to.equal('customresourcedefinition.apiextensions.k8s.io/staticsites.staticsite.dev');
    expect(result.code).to.equal(0);
  });

  describe('with the schema-only CRD', () => {
    before(async () => installCrd(cp.admin, buildCrd({ schemaOnly: true })));
    after(async () => uninstallCrd(cp.admin, 'staticsites.staticsite.dev'));

    it('defaults replicas and tier', async () => {
      const res = await cp.admin.post<{ spec: unknown }>(sites, site('defaults', { content: '<h1>hi</h1>' }));
      expect(res.status).to.equal(201);
      expect(res.body.spec).to.deep.equal({ content: '<h1>hi</h1>', replicas: 1, tier: 'dev' });
    });

    it('rejects tier prod with 1 replica with the CRD CEL message', async () => {
      const res = await cp.admin.post<{ message: string; reason: string; code: number }>(
        sites,
        site('shop', { content: 'x', tier: 'prod', replicas: 1 }),
      );
      expect(res.status).to.equal(422);
      expect(res.body.reason).to.equal('Invalid');
      // In Kubernetes 1.37 a failed rule on an object or array omits the value
      // (apiextensions-apiserver pkg/apiserver/schema/cel/validation.go: field.OmitValueType{}).
      expect(res.body.message).to.equal(
        'StaticSite.staticsite.dev "shop" is invalid: spec: Invalid value: prod sites need at least 2 replicas',
      );
    });

    it('warns about an unknown field and prunes it', async () => {
      const res = await cp.admin.post<{ spec: Record<string, unknown> }>(
        sites,
        site('unknown', { content: 'x', x: 1 }),
      );
      expect(res.status).to.equal(201);
      expect(res.warnings).to.deep.equal(['unknown field "spec.x"']);
      expect(res.body.spec).not.to.have.property('x');
    });
  });

  it('the garbage collector deletes an object whose owner is gone', async () => {
    const owner = await cp.admin.must<{ metadata: { uid: string } }>('POST', `/api/v1/namespaces/${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'owner' },
    });
    await cp.admin.must('POST', `/api/v1/namespaces/${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'child',
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }],
      },
    });
    await cp.admin.must('DELETE', `/api/v1/namespaces/${NS}/configmaps/owner`);
    await eventually(
      'child ConfigMap collected',
      async () => (await cp.admin.get(`/api/v1/namespaces/${NS}/configmaps/child`)).status === 404,
      60_000,
    );
  });

  it("a Deployment's readyReplicas reaches spec.replicas through the node simulator, and a hold keeps it at 0", async () => {
    const deployment = (name: string) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
      },
    });
    nodes.setHold((pod) => pod.name.startsWith('held-'));
    try {
      await cp.admin.must('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, deployment('held'));
      await cp.admin.must('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, deployment('web'));
      const ready = await eventually(
        'web ready',
        async () => {
          const d = await cp.admin.get<{ status?: { readyReplicas?: number } }>(
            `/apis/apps/v1/namespaces/${NS}/deployments/web`,
          );
          return d.body.status?.readyReplicas === 2 ? d.body.status.readyReplicas : undefined;
        },
        60_000,
      );
      expect(ready).to.equal(2);
      const held = await eventually('held pods bound and running', async () => {
        const pods = await cp.admin.get<{ items: Array<{ spec: { nodeName?: string }; status: { phase?: string } }> }>(
          `/api/v1/namespaces/${NS}/pods`,
          { query: { labelSelector: 'app=held' } },
        );
        const running = pods.body.items.filter((p) => p.spec.nodeName && p.status.phase === 'Running');
        if (running.length !== 2) return undefined;
        return (
          await cp.admin.get<{ status?: { replicas?: number; readyReplicas?: number } }>(
            `/apis/apps/v1/namespaces/${NS}/deployments/held`,
          )
        ).body;
      });
      expect(held.status?.replicas).to.equal(2);
      expect(held.status?.readyReplicas ?? 0).to.equal(0);
    } finally {
      nodes.setHold(undefined);
    }
    await eventually(
      'held deployment ready after release',
      async () =>
        (await cp.admin.get<{ status?: { readyReplicas?: number } }>(`/apis/apps/v1/namespaces/${NS}/deployments/held`))
          .body.status?.readyReplicas === 2,
      60_000,
    );
  });

  it('refuses a request made with a ServiceAccount token where RBAC grants nothing (403)', async () => {
    const credentials = await cp.serviceAccountCredentials(NS, 'nobody');
    const client = new KubeHttp(credentials);
    try {
      const res = await client.get<{ message: string; reason: string }>(`/api/v1/namespaces/${NS}/configmaps`);
      expect(res.status).to.equal(403);
      expect(res.body.reason).to.equal('Forbidden');
      expect(res.body.message).to.equal(
        `configmaps is forbidden: User "system:serviceaccount:${NS}:nobody" cannot list resource "configmaps" in API group "" in the namespace "${NS}"`,
      );
    } finally {
      client.close();
    }
  });
});
