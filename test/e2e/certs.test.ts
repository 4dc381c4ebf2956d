import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { connect, createServer } from 'node:tls';
import { expect } from 'chai';
import { loadAll } from 'js-yaml';
import { buildCrd, type CustomResourceDefinition } from '../../api/index.ts';
import { API_REQUEST_TIMEOUT_MS } from '../../certs/config.ts';
import { createCertificateAuthority } from '../../certs/x509.ts';
import { certsCommand } from '../../cli/certs-command.ts';
import { run } from '../../cli/main.ts';
import { SystemClock } from '../../clock/clock.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { KubeHttp } from '../../devenv/kube-http.ts';
import { connectKubeApi } from '../../kube/connect.ts';
import { AutoAdvancingClock } from '../support/kube/index.ts';
import { testCluster } from '../support/shared.ts';

const NS = 'certs-e2e';
const SERVICE = 'certs-e2e-webhook';
const SECRET = 'certs-e2e-tls';
const CA_SECRET = `${SECRET}-ca`;
const WEBHOOK_CONFIG = 'certs-e2e-webhook';
const GROUP = 'certs.staticsite.test';
// Names of its own, so that `kubectl get staticsites` elsewhere never resolves to this CRD.
const PLURAL = 'certsites';
const CRD_NAME = `${PLURAL}.${GROUP}`;
const CLUSTER_ROLE = 'certs-e2e-staticsite-certs';
const SA = 'staticsite-certs';

const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const SECRETS = `/api/v1/namespaces/${NS}/secrets`;
const repoRoot = new URL('../../', import.meta.url).pathname;

/** The names manifests/certs/certs-rbac.yaml uses, and the ones this suite uses instead. */
const RENAME: Record<string, string> = {
  'staticsite-system': NS,
  'staticsite-webhook-tls': SECRET,
  'staticsite-webhook-tls-ca': CA_SECRET,
  'staticsite-webhook': WEBHOOK_CONFIG,
  'staticsites.staticsite.dev': CRD_NAME,
};

interface Rule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}
type Doc = {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
  roleRef?: { name: string };
  subjects?: Array<{ namespace: string }>;
};

function testCrd(): CustomResourceDefinition {
  const crd = buildCrd({ conversionClientConfig: { url: 'https://127.0.0.1:9/convert' } });
  const names = { kind: 'CertSite', listKind: 'CertSiteList', plural: PLURAL, singular: 'certsite' };
  return { ...crd, metadata: { name: CRD_NAME }, spec: { ...crd.spec, group: GROUP, names } };
}

function webhookConfig(kind: 'Mutating' | 'Validating', entries: string[]) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name: WEBHOOK_CONFIG, labels: { 'certs-e2e': 'keep-me' } },
    webhooks: entries.map((name) => ({
      name,
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      failurePolicy: 'Ignore',
      timeoutSeconds: 2,
      clientConfig: { url: `https://127.0.0.1:9/${kind.toLowerCase()}` },
      rules: [{ operations: ['CREATE'], apiGroups: [GROUP], apiVersions: ['v1'], resources: [PLURAL] }],
    })),
  };
}

function certs(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []).map(
    (b) => new X509Certificate(b),
  );
}

const b64decode = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString('utf8');

async function bootstrapCli(kubeconfig: string, ...extra: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(
    [
      'certs',
      'bootstrap',
      '--service',
      SERVICE,
      '--namespace',
      NS,
      '--san',
      '127.0.0.1',
      '--kubeconfig',
      kubeconfig,
      ...extra,
    ],
    { stdout: (t) => out.push(t), stderr: (t) => err.push(t) },
  );
  return { code, stdout: out.join(''), stderr: err.join('') };
}

const standardTargets = ['--secret', SECRET, '--webhook-config', WEBHOOK_CONFIG, '--crd', CRD_NAME];

/** A TLS server with `certPem`/`keyPem` on loopback; a client trusting only `caPem` connects by `servername`. */
function handshake(
  certPem: string,
  keyPem: string,
  caPem: string,
  servername?: string,
): Promise<{ ok: boolean; error?: string }> {
  return new Promise((resolve) => {
    const server = createServer({ cert: certPem, key: keyPem, minVersion: 'TLSv1.2' }, (s) => s.end());
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      const socket = connect({ host: '127.0.0.1', port, ca: caPem, ...(servername && { servername }) }, () => {
        socket.end();
        server.close();
        resolve({ ok: socket.authorized });
      });
      socket.on('error', (error) => {
        server.close();
        resolve({ ok: false, error: (error as NodeJS.ErrnoException).code ?? error.message });
      });
    });
  });
}

describe('e2e: staticsite certs bootstrap on the real control plane', function () {
  this.timeout(180_000);
  let cp: ControlPlane;
  let saKubeconfig: string;
  let sa: KubeHttp;
  let rbacDocs: Doc[];

  async function secret(name: string) {
    return cp.admin.must<{ type: string; data: Record<string, string>; metadata: { resourceVersion: string } }>(
      'GET',
      `${SECRETS}/${name}`,
    );
  }

  async function injected() {
    const m = await cp.admin.must<{ webhooks: Array<{ clientConfig: { caBundle?: string } }> }>(
      'GET',
      `${MWC}/${WEBHOOK_CONFIG}`,
    );
    const v = await cp.admin.must<{ webhooks: Array<{ clientConfig: { caBundle?: string } }> }>(
      'GET',
      `${VWC}/${WEBHOOK_CONFIG}`,
    );
    const c = await cp.admin.must<{ spec: { conversion: { webhook: { clientConfig: { caBundle?: string } } } } }>(
      'GET',
      `${CRDS}/${CRD_NAME}`,
    );
    return [
      ...m.webhooks.map((w) => w.clientConfig.caBundle),
      ...v.webhooks.map((w) => w.clientConfig.caBundle),
      c.spec.conversion.webhook.clientConfig.caBundle,
    ].map(b64decode);
  }

  before(async () => {
    ({ controlPlane: cp } = await testCluster());
    await cp.ensureNamespace(NS);
    await installCrd(cp.admin, testCrd());
    await cp.admin.must('POST', MWC, webhookConfig('Mutating', ['a.certs.staticsite.test', 'b.certs.staticsite.test']));
    await cp.admin.must('POST', VWC, webhookConfig('Validating', ['v.certs.staticsite.test']));

    // RBAC exactly as manifests/certs/certs-rbac.yaml has it, with this suite's object names.
    const text = await readFile(`${repoRoot}manifests/certs/certs-rbac.yaml`, 'utf8');
    rbacDocs = loadAll(text) as Doc[];
    for (const doc of rbacDocs) {
      if (doc.metadata.namespace) doc.metadata.namespace = RENAME[doc.metadata.namespace] ?? doc.metadata.namespace;
      if (doc.kind.startsWith('Cluster')) doc.metadata.name = CLUSTER_ROLE;
      if (doc.roleRef && doc.kind === 'ClusterRoleBinding') doc.roleRef.name = CLUSTER_ROLE;
      for (const s of doc.subjects ?? []) s.namespace = RENAME[s.namespace] ?? s.namespace;
      for (const rule of doc.rules ?? []) {
        if (rule.resourceNames) rule.resourceNames = rule.resourceNames.map((n) => RENAME[n] ?? n);
      }
      const path: Record<string, string> = {
        ServiceAccount: `/api/v1/namespaces/${NS}/serviceaccounts`,
        Role: `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`,
        RoleBinding: `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`,
        ClusterRole: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
        ClusterRoleBinding: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      };
      const res = await cp.admin.post(path[doc.kind] ?? '', doc);
      if (res.status !== 201 && res.status !== 409) throw new Error(`create ${doc.kind}: ${res.text}`);
    }
    const credentials = await cp.serviceAccountCredentials(NS, SA);
    saKubeconfig = await cp.writeKubeconfig('certs-e2e-sa.kubeconfig', credentials, SA);
    sa = new KubeHttp(credentials);
  });

  after(async () => {
    sa?.close();
    if (!cp) return;
    await cp.admin.delete(`${MWC}/${WEBHOOK_CONFIG}`);
    await cp.admin.delete(`${VWC}/${WEBHOOK_CONFIG}`);
    await cp.admin.delete(`/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${CLUSTER_ROLE}`);
    await cp.admin.delete(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${CLUSTER_ROLE}`);
    await uninstallCrd(cp.admin, CRD_NAME);
    await cp.admin.delete(`/api/v1/namespaces/${NS}`);
  });

  it('the manifest grants only get/patch on named Secrets, webhook configurations and the CRD, plus create on Secrets', () => {
    const rules = rbacDocs.filter((d) => d.rules).flatMap((d) => (d.rules ?? []).map((r) => ({ kind: d.kind, ...r })));
    expect(rules).to.deep.equal([
      {
        kind: 'Role',
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: [SECRET, CA_SECRET],
        verbs: ['get', 'patch'],
      },
      { kind: 'Role', apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      {
        kind: 'ClusterRole',
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'],
        resourceNames: [WEBHOOK_CONFIG],
        verbs: ['get', 'patch'],
      },
      {
        kind: 'ClusterRole',
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: [CRD_NAME],
        verbs: ['get', 'patch'],
      },
    ]);
  });

  it('bootstrap, as the ServiceAccount, creates the Secrets and injects the CA into every webhook entry and the CRD, touching nothing else', async () => {
    const before = {
      m: await cp.admin.must('GET', `${MWC}/${WEBHOOK_CONFIG}`),
      v: await cp.admin.must('GET', `${VWC}/${WEBHOOK_CONFIG}`),
      c: await cp.admin.must('GET', `${CRDS}/${CRD_NAME}`),
    };
    const result = await bootstrapCli(saKubeconfig, ...standardTargets);
    expect(result.stderr).to.equal('');
    expect(result.code).to.equal(0);

    const serving = await secret(SECRET);
    expect(serving.type).to.equal('kubernetes.io/tls');
    expect(Object.keys(serving.data).sort()).to.deep.equal(['ca.crt', 'tls.crt', 'tls.key']);
    const ca = await secret(CA_SECRET);
    expect(ca.type).to.equal('Opaque');
    expect(Object.keys(ca.data).sort()).to.deep.equal(['ca.crt', 'ca.key']);
    const bundle = b64decode(serving.data['ca.crt']);
    expect(certs(bundle)).to.have.length(1);
    expect(await injected()).to.deep.equal([bundle, bundle, bundle, bundle]);

    // Nothing but the caBundles changed.
    const strip = (o: unknown) =>
      JSON.parse(
        JSON.stringify(o, (k, v) =>
          ['caBundle', 'resourceVersion', 'generation', 'managedFields', 'status'].includes(k) ? undefined : v,
        ),
      );
    expect(strip(await cp.admin.must('GET', `${MWC}/${WEBHOOK_CONFIG}`))).to.deep.equal(strip(before.m));
    expect(strip(await cp.admin.must('GET', `${VWC}/${WEBHOOK_CONFIG}`))).to.deep.equal(strip(before.v));
    expect(strip(await cp.admin.must('GET', `${CRDS}/${CRD_NAME}`))).to.deep.equal(strip(before.c));

    const leaf = new X509Certificate(b64decode(serving.data['tls.crt']));
    expect(leaf.subjectAltName).to.equal(
      `DNS:${SERVICE}, DNS:${SERVICE}.${NS}, DNS:${SERVICE}.${NS}.svc, DNS:${SERVICE}.${NS}.svc.cluster.local, IP Address:127.0.0.1`,
    );
  });

  it('a TLS handshake with a server using the issued cert succeeds with the injected CA (and fails with another CA)', async () => {
    const serving = await secret(SECRET);
    const [injectedBundle] = await injected();
    const cert = b64decode(serving.data['tls.crt']);
    const key = b64decode(serving.data['tls.key']);
    expect(await handshake(cert, key, injectedBundle ?? '', `${SERVICE}.${NS}.svc`)).to.deep.equal({ ok: true });
    expect(await handshake(cert, key, injectedBundle ?? '')).to.deep.equal({ ok: true }); // by IP SAN 127.0.0.1
    const stranger = createCertificateAuthority({ commonName: 'stranger', notBefore: new Date(), validityDays: 1 });
    const refused = await handshake(cert, key, stranger.certPem, `${SERVICE}.${NS}.svc`);
    expect(refused.ok).to.equal(false);
    expect(refused.error).to.equal('UNABLE_TO_VERIFY_LEAF_SIGNATURE'); // OpenSSL X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE
  });

  it('a second run changes nothing: no Secret, webhook configuration or CRD is written', async () => {
    const rvs = async () => [
      (await secret(SECRET)).metadata.resourceVersion,
      (await secret(CA_SECRET)).metadata.resourceVersion,
      ...(await Promise.all(
        [`${MWC}/${WEBHOOK_CONFIG}`, `${VWC}/${WEBHOOK_CONFIG}`, `${CRDS}/${CRD_NAME}`].map(
          async (p) =>
            (
              await cp.admin.must<{ metadata: { resourceVersion: string } }>('GET', p)
            ).metadata.resourceVersion,
        ),
      )),
    ];
    const before = await rvs();
    const result = await bootstrapCli(saKubeconfig, ...standardTargets);
    expect(result.code).to.equal(0);
    expect(result.stdout).to.include('"changed":false');
    expect(await rvs()).to.deep.equal(before);
  });

  it('a forced CA rotation keeps the old CA in the bundle everywhere; old and new serving certs are both trusted', async () => {
    const old = await secret(SECRET);
    const oldCert = b64decode(old.data['tls.crt']);
    const oldKey = b64decode(old.data['tls.key']);
    const [oldCa] = certs(b64decode(old.data['ca.crt']));
    const result = await bootstrapCli(saKubeconfig, ...standardTargets, '--rotate-ca');
    expect(result.stderr).to.equal('');
    expect(result.code).to.equal(0);

    const serving = await secret(SECRET);
    const bundle = b64decode(serving.data['ca.crt']);
    const bundleCerts = certs(bundle);
    expect(bundleCerts).to.have.length(2);
    expect(bundleCerts[0]?.fingerprint256).to.equal(oldCa?.fingerprint256);
    expect(b64decode((await secret(CA_SECRET)).data['ca.crt'])).to.equal(bundle);
    expect(await injected()).to.deep.equal([bundle, bundle, bundle, bundle]);

    const newCert = b64decode(serving.data['tls.crt']);
    expect(new X509Certificate(newCert).verify(bundleCerts[1]?.publicKey as X509Certificate['publicKey'])).to.equal(
      true,
    );
    const name = `${SERVICE}.${NS}.svc`;
    expect(await handshake(oldCert, oldKey, bundle, name)).to.deep.equal({ ok: true }); // a webhook not yet reloaded
    expect(await handshake(newCert, b64decode(serving.data['tls.key']), bundle, name)).to.deep.equal({ ok: true });
  });

  it('--watch, as the ServiceAccount, re-injects a caBundle someone removed on its next check', async () => {
    const [bundle] = await injected();
    const controller = new AbortController();
    const out: string[] = [];
    // Starts at the real time; each sleep ends once the hook below is done, the clock moved on by its delay.
    const clock = new AutoAdvancingClock(Date.now(), async () => {
      if (clock.delays.length === 1) {
        // Someone re-applies the configuration without the bundle on its second entry.
        await cp.admin.must(
          'PATCH',
          `${MWC}/${WEBHOOK_CONFIG}`,
          [{ op: 'remove', path: '/webhooks/1/clientConfig/caBundle' }],
          { contentType: 'application/json-patch+json' },
        );
      } else {
        controller.abort();
      }
    });
    const code = await certsCommand(
      [
        'bootstrap',
        '--service',
        SERVICE,
        '--namespace',
        NS,
        '--san',
        '127.0.0.1',
        '--kubeconfig',
        saKubeconfig,
        ...standardTargets,
        '--watch',
        '--check-interval',
        '1m',
      ],
      { stdout: (t) => out.push(t), stderr: (t) => out.push(t) },
      {
        clock,
        signal: controller.signal,
        kubeApi: (kubeconfig) =>
          connectKubeApi(kubeconfig, { clock: new SystemClock(), requestTimeoutMs: API_REQUEST_TIMEOUT_MS }),
      },
    );
    expect(code).to.equal(0);
    expect(clock.delays).to.deep.equal([60_000, 60_000]);
    expect(await injected()).to.deep.equal([bundle, bundle, bundle, bundle]);
    const events = out
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; object?: string; entries?: string[] });
    // First pass: nothing to do; second pass: exactly the entry that lost its bundle.
    expect(events.filter((e) => e.event === 'bundle-injected').map((e) => [e.object, e.entries])).to.deep.equal([
      [`MutatingWebhookConfiguration/${WEBHOOK_CONFIG}`, ['b.certs.staticsite.test']],
    ]);
  });

  it('the ServiceAccount can do nothing beyond the documented permissions', async () => {
    const denied = [
      await sa.get(`${SECRETS}`), // list
      await sa.get('/api/v1/namespaces/kube-system/secrets/anything'),
      await sa.delete(`${SECRETS}/${SECRET}`),
      await sa.put(`${SECRETS}/${SECRET}`, await secret(SECRET)),
      await sa.get(`/api/v1/namespaces/${NS}/configmaps`),
      await sa.get(MWC),
      await sa.delete(`${MWC}/${WEBHOOK_CONFIG}`),
      await sa.get(`${CRDS}/staticsites.staticsite.dev`),
      await sa.patch(`${CRDS}/staticsites.staticsite.dev`, { metadata: { labels: { x: 'y' } } }),
    ];
    expect(denied.map((r) => r.status)).to.deep.equal([403, 403, 403, 403, 403, 403, 403, 403, 403]);
    // What it may do: patch its own CRD (undone right after), create Secrets in its namespace.
    expect((await sa.patch(`${CRDS}/${CRD_NAME}`, { metadata: { labels: { x: 'y' } } })).status).to.equal(200);
    await cp.admin.patch(`${CRDS}/${CRD_NAME}`, { metadata: { labels: { x: null } } });
    const other = await sa.post(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'allowed-create' } });
    expect(other.status).to.equal(201); // create is namespace-wide (resourceNames cannot restrict it), as documented
    const otherRead = await sa.get(`${SECRETS}/allowed-create`);
    expect(otherRead.status).to.equal(403);
  });

  it('errors name the object and what to do: missing webhook configuration, missing CRD, no permission, wrong type, corrupt PEM', async () => {
    const missingConfig = await bootstrapCli(
      cp.kubeconfigPath,
      '--secret',
      SECRET,
      '--webhook-config',
      'no-such-config',
    );
    expect(missingConfig.code).to.equal(1);
    expect(missingConfig.stderr).to.equal(
      'staticsite certs: no MutatingWebhookConfiguration or ValidatingWebhookConfiguration named "no-such-config" exists. ' +
        'Apply the webhook manifests first (kubectl apply -k manifests), or fix --webhook-config.\n',
    );

    const missingCrd = await bootstrapCli(
      cp.kubeconfigPath,
      '--secret',
      SECRET,
      '--crd',
      'nothing.certs.staticsite.test',
    );
    expect(missingCrd.code).to.equal(1);
    expect(missingCrd.stderr).to.equal(
      'staticsite certs: CustomResourceDefinition nothing.certs.staticsite.test does not exist. Install it first (kubectl apply -k manifests), or fix --crd.\n',
    );

    // As the ServiceAccount, a configuration outside its resourceNames is forbidden; the server's words are quoted.
    const server = await sa.get<{ message: string }>(`${MWC}/no-such-config`);
    expect(server.status).to.equal(403);
    const forbidden = await bootstrapCli(
      saKubeconfig,
      '--secret',
      SECRET,
      '--webhook-config',
      'mutating/no-such-config',
    );
    expect(forbidden.code).to.equal(1);
    expect(forbidden.stderr).to.equal(
      `staticsite certs: cannot get MutatingWebhookConfiguration no-such-config: ${server.body.message}. ` +
        "Bind the bootstrapper's ServiceAccount to the ClusterRole in manifests/certs/certs-rbac.yaml " +
        '(get and patch on mutatingwebhookconfigurations with resourceNames [no-such-config]).\n',
    );

    await cp.admin.must('POST', SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'wrong-type' },
      type: 'Opaque',
    });
    const wrongType = await bootstrapCli(cp.kubeconfigPath, '--secret', 'wrong-type');
    expect(wrongType.code).to.equal(1);
    expect(wrongType.stderr).to.equal(
      `staticsite certs: Secret ${NS}/wrong-type has type "Opaque", but bootstrap stores the serving certificate in a Secret of type "kubernetes.io/tls". ` +
        `A Secret's type cannot be changed: delete it (kubectl -n ${NS} delete secret wrong-type) or choose another name with --secret.\n`,
    );

    await cp.admin.must('POST', SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'corrupt' },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': Buffer.from('garbage').toString('base64'),
        'tls.key': Buffer.from('garbage').toString('base64'),
      },
    });
    const corrupt = await bootstrapCli(cp.kubeconfigPath, '--secret', 'corrupt');
    expect(corrupt.code).to.equal(1);
    expect(corrupt.stderr).to.equal(
      `staticsite certs: Secret ${NS}/corrupt key tls.crt is not a PEM certificate bundle (no "-----BEGIN CERTIFICATE-----" block). ` +
        `Delete it (kubectl -n ${NS} delete secret corrupt) and run bootstrap again: a new serving certificate is issued.\n`,
    );
    expect((await cp.admin.get(`${SECRETS}/corrupt-ca`)).status).to.equal(404); // nothing written before the check
  });
});
