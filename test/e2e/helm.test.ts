import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { expect } from 'chai';
import { loadAll } from 'js-yaml';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { cachedGoTool, canonicalObjects, overlayWithControlPlane } from '../support/manifest-objects.ts';
import { testCluster } from '../support/shared.ts';

const repoRoot = new URL('../../', import.meta.url).pathname;
const chart = `${repoRoot}charts/staticsite-operator`;

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests are arbitrary YAML the tests walk into
type Json = any;

/** The labels Helm's convention adds (templates/_helpers.tpl); everything else must equal kustomize's. */
const HELM_LABELS = [
  'helm.sh/chart',
  'app.kubernetes.io/managed-by',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/version',
];

function documents(text: string): Json[] {
  return (loadAll(text) as Json[]).filter((o) => o !== null);
}

/** No cluster to ask: no kubeconfig reaches one, as on a laptop rendering for CI. */
function offline(): NodeJS.ProcessEnv {
  return { ...process.env, KUBECONFIG: '/nonexistent/kubeconfig' };
}

/** helm uninstall leaves the CRD (templates/crd.yaml): its StaticSites would go with it, finalizers stuck. */
const HELM_KEEP = 'helm.sh/resource-policy';

/** Comparable objects (support/manifest-objects.ts) without Helm's labels and its keep annotation. */
function canonical(objects: Json[]): string[] {
  return canonicalObjects(
    objects.map((o) => {
      const { [HELM_KEEP]: _keep, ...annotations } = o.metadata.annotations ?? {};
      return {
        ...o,
        metadata: {
          ...o.metadata,
          labels: Object.fromEntries(Object.entries(o.metadata.labels ?? {}).filter(([k]) => !HELM_LABELS.includes(k))),
          ...(Object.keys(annotations).length > 0 ? { annotations } : { annotations: undefined }),
        },
      };
    }),
  );
}

/** The newest Helm 4 and the newest Helm 3 (what most users run), each built from its Go module. */
const HELM_VERSIONS = ['v4.3.2', 'v3.22.0'];

for (const helmVersion of HELM_VERSIONS)
  describe(`e2e: the Helm chart (charts/staticsite-operator) with helm ${helmVersion}, and the kustomize manifests`, function () {
    this.timeout(120_000);
    let cp: ControlPlane;
    let helm: string;

    // Offline, as a user renders without a cluster: no --kube-version.
    const template = (...sets: string[]) => {
      const result = spawnSync(
        helm,
        ['template', 'staticsite', chart, '--namespace', 'staticsite-system', ...sets.flatMap((s) => ['--set', s])],
        { encoding: 'utf8', env: offline() },
      );
      return { ...result, objects: result.status === 0 ? documents(result.stdout) : [] };
    };
    const kustomize = async (tree: string) => {
      const result = await cp.kubectl(['kustomize', tree.startsWith('/') ? tree : `${repoRoot}${tree}`]);
      expect(result.code, result.stderr).to.equal(0);
      return documents(result.stdout);
    };

    before(async function () {
      this.timeout(900_000); // the first run builds helm from the module proxy (a few minutes; cached afterwards)
      helm = cachedGoTool(`${repoRoot}devenv/helm/build.sh`, helmVersion); // helm from its Go module
      ({ controlPlane: cp } = await testCluster());
    });

    it('helm lint passes with no warning, offline', () => {
      const lint = spawnSync(helm, ['lint', '--strict', chart], { encoding: 'utf8', env: offline() });
      expect(lint.status, lint.stdout + lint.stderr).to.equal(0);
      expect(lint.stdout).to.include('1 chart(s) linted, 0 chart(s) failed');
    });

    it('helm install --dry-run=server against the real control plane renders the chart for its version', () => {
      const dryRun = spawnSync(
        helm,
        [
          'install',
          'staticsite',
          chart,
          '--namespace',
          'staticsite-system',
          '--dry-run=server',
          '--kubeconfig',
          cp.kubeconfigPath,
        ],
        { encoding: 'utf8', env: offline() },
      );
      expect(dryRun.status, dryRun.stdout + dryRun.stderr).to.equal(0);
      const objects = documents(dryRun.stdout.slice(dryRun.stdout.indexOf('---')));
      expect(objects.map((o) => o.kind)).to.include.members([
        'CustomResourceDefinition',
        'Deployment',
        'MutatingWebhookConfiguration',
      ]);
    });

    const pairs = [
      { values: [], tree: 'manifests' },
      { values: ['certificates.mode=cert-manager'], tree: 'manifests/overlays/cert-manager' },
      { values: ['controller.watchNamespace=sites'], tree: 'manifests/overlays/single-namespace' },
      { values: ['monitoring.enabled=true'], tree: 'manifests/overlays/prometheus' },
      { values: ['controller.gateway=staticsite-system/public'], tree: 'manifests/overlays/gateway' },
      { values: ['controller.ingressClass=public'], tree: 'manifests/overlays/ingress' },
      { values: ['controller.sharded=true', 'controller.replicas=3'], tree: 'manifests/overlays/sharded' },
      { values: ['webhook.clientAuth.enabled=true'], tree: 'manifests/overlays/client-auth' },
      {
        values: [
          'webhook.clientAuth.enabled=true',
          'webhook.networkPolicy.controlPlaneCIDRs={192.0.2.0/24}',
          'webhook.networkPolicy.metricsFromNamespace=monitoring',
        ],
        tree: 'manifests/overlays/locked-down',
      },
    ];
    for (const { values, tree } of pairs) {
      it(`helm template ${values.join(' ') || '(defaults)'} renders the objects of ${tree}, apart from Helm's labels`, async () => {
        const rendered = template('namespace.create=true', ...values);
        expect(rendered.status, rendered.stderr).to.equal(0);
        // The watched namespace is the user's: the overlay creates it for its example, the chart does not.
        const expected = (await kustomize(tree)).filter(
          (o) => !(o.kind === 'Namespace' && o.metadata.name === 'sites'),
        );
        expect(canonical(rendered.objects)).to.deep.equal(canonical(expected));
        for (const o of rendered.objects) {
          expect(o.metadata.labels, `${o.kind}/${o.metadata.name}`).to.include({
            'app.kubernetes.io/managed-by': 'Helm',
          });
        }
      });
    }

    it("webhook.networkPolicy renders the objects of the base plus webhook-from-control-plane, the user's CIDRs and namespace patched in", async () => {
      const rendered = template(
        'namespace.create=true',
        'webhook.networkPolicy.controlPlaneCIDRs={10.0.0.10/32,10.0.0.11/32}',
        'webhook.networkPolicy.metricsFromNamespace=prometheus',
      );
      expect(rendered.status, rendered.stderr).to.equal(0);
      const dir = overlayWithControlPlane(['10.0.0.10/32', '10.0.0.11/32'], 'prometheus');
      const expected = await kustomize(dir).finally(() => rmSync(dir, { recursive: true }));
      expect(canonical(rendered.objects)).to.deep.equal(canonical(expected));
    });

    it('webhook.networkPolicy.controlPlanePeers joins the ipBlocks as peers of the webhook port (konnectivity agents)', () => {
      const agents = {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
        podSelector: { matchLabels: { 'k8s-app': 'konnectivity-agent' } },
      };
      const result = spawnSync(
        helm,
        [
          'template',
          'staticsite',
          chart,
          '--namespace',
          'staticsite-system',
          '--set',
          'webhook.networkPolicy.controlPlaneCIDRs={10.0.0.10/32}',
          '--set-json',
          `webhook.networkPolicy.controlPlanePeers=${JSON.stringify([agents])}`,
        ],
        { encoding: 'utf8', env: offline() },
      );
      expect(result.status, result.stderr).to.equal(0);
      const policy = documents(result.stdout).find(
        (o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'staticsite-webhook',
      );
      expect(policy.spec.ingress).to.deep.equal([
        {
          ports: [
            { port: 8443, protocol: 'TCP' },
            { port: 8080, protocol: 'TCP' },
          ],
          from: [{ ipBlock: { cidr: '10.0.0.10/32' } }, agents],
        },
      ]);
    });

    it('by default neither the release namespace nor its default-deny policy is rendered (a shared namespace stays open)', () => {
      const rendered = template();
      expect(rendered.status, rendered.stderr).to.equal(0);
      expect(rendered.objects.filter((o) => o.kind === 'Namespace')).to.deep.equal([]);
      expect(rendered.objects.filter((o) => o.metadata.name === 'default-deny-ingress')).to.deep.equal([]);
    });

    it('the CRD is kept on helm uninstall', () => {
      const crd = template().objects.find((o) => o.kind === 'CustomResourceDefinition');
      expect(crd.metadata.annotations).to.include({ [HELM_KEEP]: 'keep' });
    });

    it('values reach the objects: image, replicas, resources, base domain, and the release namespace', () => {
      const rendered = template(
        'image.repository=registry.example/staticsite',
        'image.tag=1.2.3',
        'webhook.replicas=3',
        'controller.replicas=1',
        'controller.resources.limits.memory=512Mi',
        'baseDomain=sites.example.org',
      );
      expect(rendered.status, rendered.stderr).to.equal(0);
      const deployment = (name: string) =>
        rendered.objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name);
      for (const name of ['staticsite-webhook', 'staticsite-controller', 'staticsite-certs']) {
        expect(deployment(name)?.spec.template.spec.containers[0].image).to.equal('registry.example/staticsite:1.2.3');
      }
      expect(deployment('staticsite-webhook')?.spec.replicas).to.equal(3);
      expect(deployment('staticsite-controller')?.spec.replicas).to.equal(1);
      expect(deployment('staticsite-controller')?.spec.template.spec.containers[0].resources.limits.memory).to.equal(
        '512Mi',
      );
      for (const name of ['staticsite-webhook', 'staticsite-controller']) {
        expect(deployment(name)?.spec.template.spec.containers[0].args).to.include('--base-domain=sites.example.org');
      }

      // Another release namespace: every reference follows it, none is left at staticsite-system.
      const moved = spawnSync(helm, ['template', 'staticsite', chart, '--namespace', 'ops'], {
        encoding: 'utf8',
        env: offline(),
      });
      expect(moved.status, moved.stderr).to.equal(0);
      expect(moved.stdout).not.to.include('staticsite-system');
      const objects = documents(moved.stdout);
      const validating = objects.find((o) => o.kind === 'ValidatingWebhookConfiguration');
      expect(validating.webhooks[0].clientConfig.service.namespace).to.equal('ops');
      expect(validating.webhooks[0].namespaceSelector.matchExpressions[0].values).to.deep.equal(['kube-system', 'ops']);
      const crd = objects.find((o) => o.kind === 'CustomResourceDefinition');
      expect(crd.spec.conversion.webhook.clientConfig.service.namespace).to.equal('ops');
    });

    it('webhook.clientAuth.conversionPort moves every reference to the conversion port together', () => {
      const rendered = template('webhook.clientAuth.enabled=true', 'webhook.clientAuth.conversionPort=10443');
      expect(rendered.status, rendered.stderr).to.equal(0);
      const webhook = (kind: string) =>
        rendered.objects.find((o) => o.kind === kind && o.metadata.name === 'staticsite-webhook');
      const container = webhook('Deployment').spec.template.spec.containers[0];
      expect(container.args).to.include.members(['--client-ca=/certs/ca.crt', '--conversion-port=10443']);
      expect(container.ports).to.deep.include({ name: 'conversion', containerPort: 10443 });
      expect(webhook('Service').spec.ports).to.deep.include({
        name: 'conversion',
        port: 10443,
        targetPort: 'conversion',
      });
      expect(webhook('NetworkPolicy').spec.ingress[0].ports).to.deep.include({ port: 10443, protocol: 'TCP' });
      const crd = rendered.objects.find((o) => o.kind === 'CustomResourceDefinition');
      expect(crd.spec.conversion.webhook.clientConfig.service.port).to.equal(10443);
      const off = template().objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'staticsite-webhook');
      expect(off.spec.template.spec.containers[0].args.join(' ')).not.to.match(/--client-ca|--conversion-port/);
    });

    it('an unknown certificate mode fails the render with a message naming the choices', () => {
      const rendered = template('certificates.mode=vault');
      expect(rendered.status).to.not.equal(0);
      expect(rendered.stderr).to.include('certificates.mode must be bootstrapper or cert-manager, not "vault"');
    });
  });
