import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { expect } from 'chai';
import { loadAll } from 'js-yaml';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { thirdPartyCrdFiles } from '../../devenv/third-party-crds.ts';
import { builtCli } from '../../devenv/webhook-process.ts';
import { cachedGoTool, canonicalObjects, overlayWithControlPlane } from '../support/manifest-objects.ts';
import { testCluster } from '../support/shared.ts';

const repoRoot = new URL('../../', import.meta.url).pathname;
const TREES = [
  'manifests',
  'manifests/overlays/schema-only',
  'manifests/overlays/webhook-only',
  'manifests/overlays/local',
  'manifests/overlays/single-namespace',
  'manifests/overlays/prometheus',
  'manifests/overlays/cert-manager',
  'manifests/overlays/policies',
  'manifests/overlays/dns',
  'manifests/overlays/gateway',
  'manifests/overlays/ingress',
  'manifests/overlays/sharded',
  'manifests/overlays/client-auth',
  'manifests/overlays/locked-down',
  'manifests/storage-migration',
];

// biome-ignore lint/suspicious/noExplicitAny: built manifests are arbitrary YAML the tests walk into
type Json = any;

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, Json>;
  rules?: Array<{ verbs: string[]; resources?: string[] }>;
  webhooks?: Array<Record<string, Json>>;
  subjects?: Array<{ kind: string; name: string }>;
  roleRef?: { kind: string; name: string };
}

async function build(cp: ControlPlane, tree: string): Promise<K8sObject[]> {
  const result = await cp.kubectl(['kustomize', `${repoRoot}${tree}`]);
  expect(result.stderr, `kubectl kustomize ${tree}`).to.equal('');
  expect(result.code).to.equal(0);
  return loadAll(result.stdout) as K8sObject[];
}

/**
 * `kubectl kustomize` of the older kubectl releases we support (1.30 and newer; ours is the control
 * plane's): kubectl's own kustomize command built with each release's module graph from the Go
 * module proxy by devenv/kustomize/build.sh into the cache. kubectl 1.31 and 1.32 embed kustomize
 * v5.4.2 and v5.5.0, whose kyaml panicked on several `$patch: delete` documents in one patch file.
 */
const OLDER_KUBECTLS = [
  { kubectl: '1.30', module: 'v0.30.14' },
  { kubectl: '1.31', module: 'v0.31.14' },
  { kubectl: '1.32', module: 'v0.32.10' },
];

function kustomizeBinary(module: string): string {
  return cachedGoTool(`${repoRoot}devenv/kustomize/build.sh`, module);
}

describe('e2e: the kustomize manifests', function () {
  this.timeout(120_000);
  let cp: ControlPlane;
  const built = new Map<string, K8sObject[]>();

  before(async function () {
    this.timeout(300_000); // the first run downloads the two projects' modules (about 8 MB)
    ({ controlPlane: cp } = await testCluster());
    for (const tree of TREES) built.set(tree, await build(cp, tree));
    // The overlays for the Prometheus Operator and cert-manager need their published CRDs.
    for (const project of ['prometheus-operator', 'cert-manager'] as const) {
      for (const file of await thirdPartyCrdFiles(project)) {
        const applied = await cp.kubectl(['apply', '--server-side', '--field-manager=manifests-test', '-f', file]);
        expect(applied.code, `${file}: ${applied.stderr}`).to.equal(0);
      }
    }
    const established = await cp.kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/servicemonitors.monitoring.coreos.com',
      'crd/prometheusrules.monitoring.coreos.com',
      'crd/certificates.cert-manager.io',
      'crd/issuers.cert-manager.io',
    ]);
    expect(established.code, established.stderr).to.equal(0);
  });

  for (const { kubectl, module } of OLDER_KUBECTLS) {
    it(`every kustomization builds with kubectl ${kubectl}'s kustomize to the same objects as ours`, function () {
      this.timeout(600_000); // the first run compiles it (about 35 s; cached afterwards)
      const binary = kustomizeBinary(module);
      for (const tree of TREES) {
        const older = spawnSync(binary, [`${repoRoot}${tree}`], { encoding: 'utf8' });
        expect(older.stderr, `kubectl ${kubectl} kustomize ${tree}`).to.equal('');
        expect(older.status, tree).to.equal(0);
        const objects = loadAll(older.stdout) as K8sObject[];
        expect(canonicalObjects(objects), tree).to.deep.equal(canonicalObjects(built.get(tree) ?? []));
      }
    });
  }

  it('`kubectl apply -k manifests` deploys the whole system', () => {
    const kinds = (built.get('manifests') ?? []).map((o) => `${o.kind}/${o.metadata.name}`);
    expect(kinds).to.include.members([
      'Namespace/staticsite-system',
      'CustomResourceDefinition/staticsites.staticsite.dev',
      'Deployment/staticsite-webhook',
      'Deployment/staticsite-controller',
      'Deployment/staticsite-certs',
      'Service/staticsite-webhook',
      'PodDisruptionBudget/staticsite-webhook',
      'MutatingWebhookConfiguration/staticsite-webhook',
      'ValidatingWebhookConfiguration/staticsite-webhook',
    ]);
  });

  for (const tree of TREES) {
    it(`${tree}: every object passes server-side apply (dry-run) on the real API server, with no warning`, async () => {
      // Namespaced objects need their namespace to exist, even in a dry run.
      for (const o of built.get(tree) ?? []) if (o.kind === 'Namespace') await cp.ensureNamespace(o.metadata.name);
      const result = await cp.kubectl([
        'apply',
        '--server-side',
        '--dry-run=server',
        '--field-manager=manifests-test',
        '-k',
        `${repoRoot}${tree}`,
      ]);
      expect(result.stderr, result.stderr).to.equal('');
      expect(result.code).to.equal(0);
      expect(result.stdout.trim().split('\n')).to.have.length((built.get(tree) ?? []).length);
    });
  }

  it('every workload is non-root, read-only, unprivileged, seccomp RuntimeDefault, with requests and limits', () => {
    const workloads = (built.get('manifests') ?? []).filter((o) => o.kind === 'Deployment');
    expect(workloads).to.have.length(3);
    for (const d of workloads) {
      const pod = d.spec?.template.spec;
      expect(pod.securityContext.runAsNonRoot, d.metadata.name).to.equal(true);
      expect(pod.securityContext.seccompProfile).to.deep.equal({ type: 'RuntimeDefault' });
      for (const c of pod.containers) {
        const where = `${d.metadata.name}/${c.name}`;
        expect(c.securityContext.allowPrivilegeEscalation, where).to.equal(false);
        expect(c.securityContext.readOnlyRootFilesystem, where).to.equal(true);
        expect(c.securityContext.capabilities.drop, where).to.deep.equal(['ALL']);
        expect(c.resources.requests, where).to.have.keys('cpu', 'memory');
        expect(c.resources.limits, where).to.have.keys('cpu', 'memory');
        expect(c.readinessProbe, where).to.be.an('object');
      }
    }
  });

  it('the webhook is highly available: 2 replicas, anti-affinity, a PDB, readiness on /readyz', () => {
    const objects = built.get('manifests') ?? [];
    const webhook = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'staticsite-webhook');
    expect(webhook?.spec?.replicas).to.equal(2);
    expect(webhook?.spec?.template.spec.affinity.podAntiAffinity).to.be.an('object');
    expect(webhook?.spec?.template.spec.containers[0].readinessProbe.httpGet.path).to.equal('/readyz');
    const pdb = objects.find((o) => o.kind === 'PodDisruptionBudget' && o.metadata.name === 'staticsite-webhook');
    expect(pdb?.spec?.minAvailable).to.equal(1);
    const controller = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'staticsite-controller');
    expect(controller?.spec?.replicas).to.equal(2);
    expect(controller?.spec?.template.spec.containers[0].args).to.include('--leader-elect');
  });

  it('the webhook configurations fail closed, have no side effects, a short timeout and skip system namespaces', () => {
    for (const tree of ['manifests', 'manifests/overlays/local']) {
      const configs = (built.get(tree) ?? []).filter((o) => o.kind.endsWith('WebhookConfiguration'));
      expect(configs).to.have.length(2);
      for (const config of configs) {
        for (const hook of config.webhooks ?? []) {
          expect(hook.failurePolicy).to.equal('Fail');
          expect(hook.sideEffects).to.equal('None');
          expect(hook.matchPolicy).to.equal('Equivalent');
          expect(hook.admissionReviewVersions).to.deep.equal(['v1']);
          expect(hook.timeoutSeconds).to.be.at.most(5);
          expect(hook.namespaceSelector.matchExpressions).to.deep.equal([
            { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'staticsite-system'] },
          ]);
        }
      }
    }
  });

  it('the controller may delete nothing but its own hostname claims (Leases, in its namespace only)', () => {
    const objects = built.get('manifests') ?? [];
    const boundToController = objects.filter(
      (o) => o.kind.endsWith('Binding') && o.subjects?.some((s) => s.name === 'staticsite-controller'),
    );
    expect(boundToController.length).to.be.greaterThan(0);
    for (const binding of boundToController) {
      const role = objects.find((o) => o.kind === binding.roleRef?.kind && o.metadata.name === binding.roleRef?.name);
      expect(role, binding.metadata.name).to.not.equal(undefined);
      for (const rule of role?.rules ?? []) {
        if (!rule.verbs.some((v: string) => ['delete', 'deletecollection', '*'].includes(v))) continue;
        expect(role?.kind, binding.metadata.name).to.equal('Role');
        expect(role?.metadata.namespace).to.equal('staticsite-system');
        expect(rule.resources).to.deep.equal(['leases']);
        expect(rule.verbs).not.to.include.oneOf(['deletecollection', '*']);
      }
    }
  });

  it('schema-only has no webhook and no conversion; local reaches the webhook by URL', () => {
    const schemaOnly = built.get('manifests/overlays/schema-only') ?? [];
    expect(schemaOnly.map((o) => o.kind)).not.to.include.oneOf([
      'MutatingWebhookConfiguration',
      'ValidatingWebhookConfiguration',
    ]);
    const crd = schemaOnly.find((o) => o.kind === 'CustomResourceDefinition');
    expect(crd?.spec?.conversion).to.deep.equal({ strategy: 'None' });
    expect(JSON.stringify(schemaOnly)).not.to.include('staticsite-webhook');

    const local = built.get('manifests/overlays/local') ?? [];
    expect(local.map((o) => o.kind)).not.to.include.oneOf(['Deployment', 'Service', 'PodDisruptionBudget']);
    const localCrd = local.find((o) => o.kind === 'CustomResourceDefinition');
    expect(localCrd?.spec?.conversion.webhook.clientConfig).to.deep.equal({ url: 'https://127.0.0.1:8443/convert' });
  });

  it('prometheus: the ServiceMonitor scrapes a metrics Service per process, each reaching a named metrics port', () => {
    const objects = built.get('manifests/overlays/prometheus') ?? [];
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor');
    const selector: Record<string, string> = monitor?.spec?.selector.matchLabels;
    const port: string = monitor?.spec?.endpoints[0].port;
    const scraped = objects.filter(
      (o) =>
        o.kind === 'Service' &&
        Object.entries(selector).every(([k, v]) => (o as Json).metadata.labels?.[k] === v) &&
        monitor?.spec?.namespaceSelector.matchNames.includes(o.metadata.namespace),
    );
    expect(scraped.map((o) => o.metadata.name).sort()).to.deep.equal([
      'staticsite-certs-metrics',
      'staticsite-controller-metrics',
      'staticsite-webhook-metrics',
    ]);
    for (const service of scraped) {
      const servicePort = service.spec?.ports.find((p: Json) => p.name === port);
      const pods = objects.filter(
        (o) =>
          o.kind === 'Deployment' &&
          Object.entries(service.spec?.selector as Record<string, string>).every(
            ([k, v]) => o.spec?.template.metadata.labels[k] === v,
          ),
      );
      expect(pods, service.metadata.name).to.have.length(1);
      const container = pods[0]?.spec?.template.spec.containers[0];
      const target = container.ports.find((p: Json) => p.name === servicePort.targetPort);
      expect(target, `${service.metadata.name} -> ${servicePort.targetPort}`).to.be.an('object');
      // The namespace denies all ingress by default: a NetworkPolicy must admit the scrape.
      const podLabels: Record<string, string> = pods[0]?.spec?.template.metadata.labels;
      const admitted = objects.some(
        (o) =>
          o.kind === 'NetworkPolicy' &&
          Object.entries((o.spec?.podSelector.matchLabels ?? {}) as Record<string, string>).every(
            ([k, v]) => podLabels[k] === v,
          ) &&
          Object.keys(o.spec?.podSelector.matchLabels ?? {}).length > 0 &&
          (o.spec?.ingress ?? []).some((rule: Json) =>
            (rule.ports ?? []).some((p: Json) => p.port === target.containerPort || p.port === target.name),
          ),
      );
      expect(admitted, `a NetworkPolicy admitting ${service.metadata.name}'s port ${target.containerPort}`).to.equal(
        true,
      );
      // The process serves its metrics on that port: the flag names the same number.
      expect(container.args.join(' ')).to.match(
        new RegExp(`--metrics-(port=|bind-address=:)${target.containerPort}\\b`),
      );
    }
  });

  it('cert-manager: no bootstrapper; the serving Certificate fills the Secret the webhook mounts, for its Service', () => {
    const objects = built.get('manifests/overlays/cert-manager') ?? [];
    expect(objects.filter((o) => o.metadata.name === 'staticsite-certs')).to.deep.equal([]);
    const webhook = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'staticsite-webhook');
    const mounted = webhook?.spec?.template.spec.volumes.find((v: Json) => v.name === 'certs').secret.secretName;
    const serving = objects.find((o) => o.kind === 'Certificate' && o.spec?.secretName === mounted);
    expect(serving, `a Certificate for Secret ${mounted}`).to.be.an('object');
    const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'staticsite-webhook');
    expect(serving?.spec?.dnsNames).to.include(`${service?.metadata.name}.${service?.metadata.namespace}.svc`);
    expect(serving?.spec?.usages).to.include('server auth');
    // Its issuer is a CA issued by the self-signed root, so renewing the serving cert keeps the bundle.
    const issuer = objects.find((o) => o.kind === 'Issuer' && o.metadata.name === serving?.spec?.issuerRef.name);
    const ca = objects.find((o) => o.kind === 'Certificate' && o.spec?.secretName === issuer?.spec?.ca.secretName);
    expect(ca?.spec?.isCA).to.equal(true);
    // cainjector fills every caBundle the API server uses to call the webhook.
    const injected = objects.filter(
      (o) =>
        (o as Json).metadata.annotations?.['cert-manager.io/inject-ca-from'] ===
        `staticsite-system/${serving?.metadata.name}`,
    );
    expect(injected.map((o) => o.kind).sort()).to.deep.equal([
      'CustomResourceDefinition',
      'MutatingWebhookConfiguration',
      'ValidatingWebhookConfiguration',
    ]);
  });

  const CHILD_VERBS = ['get', 'list', 'watch', 'create', 'update'];
  const exposures = [
    {
      overlay: 'gateway',
      flag: '--gateway=staticsite-system/public',
      role: 'staticsite-controller-routes',
      rules: [
        { apiGroups: ['gateway.networking.k8s.io'], resources: ['httproutes'], verbs: CHILD_VERBS },
        { apiGroups: ['gateway.networking.k8s.io'], resources: ['gateways'], verbs: ['get', 'list', 'watch'] },
      ],
    },
    {
      overlay: 'ingress',
      flag: '--ingress-class=public',
      role: 'staticsite-controller-ingresses',
      rules: [{ apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: CHILD_VERBS }],
    },
  ];
  for (const { overlay, flag, role, rules } of exposures) {
    it(`${overlay}: the controller gets ${flag.split('=')[0]}, and its ServiceAccount the grant it asks for at start-up`, () => {
      const objects = built.get(`manifests/overlays/${overlay}`) ?? [];
      const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'staticsite-controller');
      expect(deployment?.spec?.template.spec.containers[0].args).to.include(flag);
      const binding = objects.find((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === role);
      expect(binding?.subjects).to.deep.equal([
        { kind: 'ServiceAccount', name: 'staticsite-controller', namespace: 'staticsite-system' },
      ]);
      const clusterRole = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === binding?.roleRef?.name);
      expect(clusterRole?.rules).to.deep.equal(rules);
    });
  }

  it('sharded: 3 controller replicas, each a shard named after its pod; the webhook labels sites from their Leases', () => {
    const objects = built.get('manifests/overlays/sharded') ?? [];
    const deployment = (name: string) =>
      objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name)?.spec ?? {};
    const controller = deployment('staticsite-controller');
    expect(controller.replicas).to.equal(3);
    const container = controller.template.spec.containers[0];
    expect(container.args).to.include.members(['--sharded', '--leader-elect']);
    expect(container.env).to.deep.include({
      name: 'POD_NAME',
      valueFrom: { fieldRef: { fieldPath: 'metadata.name' } },
    });
    expect(deployment('staticsite-webhook').template.spec.containers[0].args).to.include(
      '--shard-leases-namespace=staticsite-system',
    );
    const grants = Object.fromEntries(
      ['staticsite-controller', 'staticsite-webhook'].map((account) => {
        const binding = objects.find((o) => o.kind === 'RoleBinding' && o.metadata.name === `${account}-shard-leases`);
        expect(binding?.subjects).to.deep.equal([
          { kind: 'ServiceAccount', name: account, namespace: 'staticsite-system' },
        ]);
        const role = objects.find((o) => o.kind === 'Role' && o.metadata.name === binding?.roleRef?.name);
        return [account, role?.rules];
      }),
    );
    expect(grants).to.deep.equal({
      'staticsite-controller': [
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update', 'list', 'watch'] },
      ],
      'staticsite-webhook': [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['list', 'watch'] }],
    });
  });

  it('client-auth: the webhook asks for a client certificate, and the CRD converts through the conversion port (9443)', () => {
    const objects = built.get('manifests/overlays/client-auth') ?? [];
    const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
    const container = find('Deployment', 'staticsite-webhook')?.spec?.template.spec.containers[0];
    expect(container.args).to.include.members([
      '--cert-dir=/certs',
      '--client-ca=/certs/ca.crt',
      '--conversion-port=9443',
    ]);
    expect(container.ports).to.deep.include({ name: 'conversion', containerPort: 9443 });
    expect(find('Service', 'staticsite-webhook')?.spec?.ports).to.deep.include({
      name: 'conversion',
      port: 9443,
      targetPort: 'conversion',
    });
    const ingress = find('NetworkPolicy', 'staticsite-webhook')?.spec?.ingress[0].ports;
    expect(ingress).to.deep.include({ port: 9443, protocol: 'TCP' });
    const conversion = find('CustomResourceDefinition', 'staticsites.staticsite.dev')?.spec?.conversion;
    expect(conversion.webhook.clientConfig.service).to.deep.equal({
      namespace: 'staticsite-system',
      name: 'staticsite-webhook',
      path: '/convert',
      port: 9443,
    });
    // The admission webhooks still call the Service's port 443 (the webhook port, behind the client CA).
    for (const config of objects.filter((o) => o.kind.endsWith('WebhookConfiguration'))) {
      for (const hook of config.webhooks ?? []) expect(hook.clientConfig.service.port ?? 443).to.equal(443);
    }
    // The default manifests are unchanged: no client CA, no conversion port.
    const shipped = (built.get('manifests') ?? []).find(
      (o) => o.kind === 'Deployment' && o.metadata.name === 'staticsite-webhook',
    );
    expect(shipped?.spec?.template.spec.containers[0].args.join(' ')).not.to.match(/--client-ca|--conversion-port/);
  });

  it('locked-down: the webhook and conversion ports admit only the control-plane ipBlocks, metrics only the monitoring namespace', () => {
    const policy = (tree: string) =>
      (built.get(tree) ?? []).find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'staticsite-webhook');
    expect(policy('manifests/overlays/locked-down')?.spec?.ingress).to.deep.equal([
      {
        from: [{ ipBlock: { cidr: '192.0.2.0/24' } }],
        ports: [
          { port: 8443, protocol: 'TCP' },
          { port: 9443, protocol: 'TCP' },
        ],
      },
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
        ports: [{ port: 8080, protocol: 'TCP' }],
      },
    ]);
    // The default manifests are unchanged: both ports open to every source.
    expect(policy('manifests')?.spec?.ingress).to.deep.equal([
      {
        ports: [
          { port: 8443, protocol: 'TCP' },
          { port: 8080, protocol: 'TCP' },
        ],
      },
    ]);
  });

  it("webhook-from-control-plane on the base, with the user's CIDRs and namespace patched in as its comment shows", async () => {
    const dir = overlayWithControlPlane(['10.0.0.10/32', '10.0.0.11/32'], 'prometheus');
    const result = await cp.kubectl(['kustomize', dir]);
    rmSync(dir, { recursive: true });
    expect(result.stderr).to.equal('');
    const policy = (loadAll(result.stdout) as K8sObject[]).find(
      (o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'staticsite-webhook',
    );
    expect(policy?.spec?.ingress).to.deep.equal([
      {
        from: [{ ipBlock: { cidr: '10.0.0.10/32' } }, { ipBlock: { cidr: '10.0.0.11/32' } }],
        ports: [{ port: 8443, protocol: 'TCP' }],
      },
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'prometheus' } } }],
        ports: [{ port: 8080, protocol: 'TCP' }],
      },
    ]);
  });

  it("dns: the controller takes the overlay's flags, and reads its TSIG key where the Secret is mounted", () => {
    const objects = built.get('manifests/overlays/dns') ?? [];
    const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'staticsite-controller');
    const pod = deployment?.spec?.template.spec;
    const container = pod.containers[0];
    const keyFile = (container.args as string[]).find((a) => a.startsWith('--dns-tsig-key-file='))?.split('=')[1] ?? '';
    const mount = container.volumeMounts.find((m: Json) => keyFile.startsWith(`${m.mountPath}/`));
    expect(pod.volumes.find((v: Json) => v.name === mount?.name)?.secret).to.deep.equal({
      secretName: 'staticsite-dns-tsig',
    });
    // The built CLI parses the flags (a usage error would exit 2) and gets as far as the key file.
    const run = spawnSync(
      process.execPath,
      [builtCli(), ...container.args, '--kubeconfig', cp.kubeconfigPath, '--metrics-port', '0'],
      {
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(run.status, run.stderr).to.equal(1);
    expect(run.stderr + run.stdout).to.include(`cannot read the TSIG key file ${keyFile}`);
  });
});
