import { expect } from 'chai';
import { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually } from '../../devenv/crds.ts';

const repoRoot = new URL('../../', import.meta.url).pathname;
const SITES = '/apis/staticsite.dev/v1/namespaces/web/staticsites';

interface Site {
  metadata: { name: string; finalizers?: string[]; resourceVersion?: string };
  spec: { content: string; tier?: string; replicas?: number; hostname?: string };
}

/**
 * `kubectl apply -k manifests/overlays/policies` on a control plane of its own (its policies bind every
 * StaticSite, so not the shared one), then the rules and mutations through the API server.
 */
describe('e2e: manifests/overlays/policies (admission policies, no webhook) on a real API server', function () {
  this.timeout(180_000);
  // The status controller writes the validating policy's type checking.
  const cp = new ControlPlane({ controllers: ['validatingadmissionpolicy-status-controller'] });
  const site = (name: string, spec: Site['spec']) => ({
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: { name },
    spec,
  });

  before(async function () {
    this.timeout(600_000);
    await cp.start();
    const applied = await cp.kubectl(['apply', '--server-side', '-k', `${repoRoot}manifests/overlays/policies`]);
    expect(applied.code, applied.stderr).to.equal(0);
    expect(applied.stderr).to.equal('');
    await cp.ensureNamespace('web');
    // Policies take effect a moment after they are stored.
    await eventually('the policies answer', async () => {
      const res = await cp.admin.post<Site>(SITES, site('probe', { content: 'x' }), { query: { dryRun: 'All' } });
      return res.status === 201 && res.body.metadata.finalizers !== undefined;
    });
    await eventually('the validating policy answers', async () => {
      const res = await cp.admin.post<{ message?: string }>(SITES, site('probe', { content: 'x', tier: 'prod' }), {
        query: { dryRun: 'All' },
      });
      return res.body.message?.includes('ValidatingAdmissionPolicy');
    });
  });
  after(async () => cp.stop());

  it('the validating policy type-checks against the CRD without a warning', async () => {
    const typeChecking = await eventually('type checking reported', async () => {
      const policy = await cp.admin.must<{ status?: { typeChecking?: { expressionWarnings?: unknown[] } } }>(
        'GET',
        '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/staticsite-rules',
      );
      return policy.status?.typeChecking;
    });
    expect(typeChecking.expressionWarnings ?? []).to.deep.equal([]);
  });

  it('a create gets the finalizer and the hostname of its name, namespace and base domain', async () => {
    const res = await cp.admin.post<Site>(SITES, site('shop', { content: '<h1>shop</h1>', tier: 'prod', replicas: 2 }));
    expect(res.status, res.text).to.equal(201);
    expect(res.body.metadata.finalizers).to.deep.equal(['staticsite.dev/external-record']);
    expect(res.body.spec.hostname).to.equal('shop.web.sites.staticsite.dev');
  });

  it('the rules deny with the policy, as kube-apiserver words a policy denial', async () => {
    const prod = await cp.admin.post<{ message: string }>(
      SITES,
      site('prod1', { content: 'x', tier: 'prod', replicas: 1 }),
    );
    expect(prod.status).to.equal(422);
    expect(prod.body.message).to.equal(
      `staticsites.staticsite.dev "prod1" is forbidden: ValidatingAdmissionPolicy 'staticsite-rules' with binding 'staticsite-rules' denied request: prod sites need at least 2 replicas`,
    );
    const live = await cp.admin.must<Site>('GET', `${SITES}/shop`);
    for (const [change, message] of [
      [{ tier: 'dev' }, 'tier is immutable'],
      [{ replicas: 1 }, 'prod sites need at least 2 replicas'],
    ] as const) {
      const res = await cp.admin.put<{ message: string }>(`${SITES}/shop`, {
        ...live,
        spec: { ...live.spec, ...change },
      });
      expect(res.status, JSON.stringify(change)).to.equal(422);
      expect(res.body.message).to.match(new RegExp(`denied request: ${message}$`));
    }
  });

  it('no scale subresource: a prod site cannot be scaled below 2 past the policy', async () => {
    const scaled = await cp.admin.put<{ reason?: string }>(`${SITES}/shop/scale`, {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'shop', namespace: 'web' },
      spec: { replicas: 1 },
    });
    expect(scaled.status).to.equal(404);
    expect((await cp.admin.must<Site>('GET', `${SITES}/shop`)).spec.replicas).to.equal(2);
  });
});
