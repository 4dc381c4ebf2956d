import { expect } from 'chai';
import { CertsError } from '../../certs/errors.ts';
import { KubeBundleInjector, parseWebhookConfigRef } from '../../certs/injector.ts';
import { KubeApi } from '../../kube/api-client.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { FakeApiServer, type RecordedRequest } from '../support/kube/index.ts';

const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const BUNDLE = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const B64 = Buffer.from(BUNDLE).toString('base64');

type Hooks = KubeObject & { webhooks: Array<{ clientConfig: { caBundle: string } }> };
type ConversionCrd = KubeObject & { spec: { conversion: { webhook: { clientConfig: { caBundle: string } } } } };

function fake() {
  const server = new FakeApiServer();
  return { server, api: new KubeApi(server) };
}

const on = (method: string, path: string) => (r: RecordedRequest) => r.method === method && r.path === path;

function webhookConfig(name: string, entries: Array<{ name: string; caBundle?: string }>) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    metadata: { name, labels: { keep: 'me' } },
    webhooks: entries.map((e) => ({
      name: e.name,
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      clientConfig: {
        service: { name: 'svc', namespace: 'ns', path: '/mutate' },
        ...(e.caBundle && { caBundle: e.caBundle }),
      },
      rules: [
        { operations: ['CREATE'], apiGroups: ['staticsite.dev'], apiVersions: ['v1'], resources: ['staticsites'] },
      ],
    })),
  };
}

function crd(name: string, strategy: 'Webhook' | 'None') {
  return {
    metadata: { name },
    spec: {
      group: 'staticsite.dev',
      conversion:
        strategy === 'Webhook'
          ? {
              strategy,
              webhook: {
                conversionReviewVersions: ['v1'],
                clientConfig: { service: { name: 'svc', namespace: 'ns' } },
              },
            }
          : { strategy },
    },
  };
}

async function expectCertsError(promise: Promise<unknown>): Promise<CertsError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(CertsError);
    return error as CertsError;
  }
  throw new Error('expected a CertsError');
}

describe('certs: caBundle injection', () => {
  it('patches caBundle into every webhook entry of both kinds and the CRD conversion, and nothing else', async () => {
    const { server, api } = fake();
    server.seed(
      MWC,
      webhookConfig('hooks', [{ name: 'a.staticsite.dev' }, { name: 'b.staticsite.dev', caBundle: 'b2xk' }]),
    );
    server.seed(VWC, webhookConfig('hooks', [{ name: 'v.staticsite.dev' }]));
    server.seed(CRDS, crd('sites.staticsite.dev', 'Webhook'));
    const before = {
      m: server.read(MWC, 'hooks'),
      v: server.read(VWC, 'hooks'),
      c: server.read(CRDS, 'sites.staticsite.dev'),
    };
    const injector = new KubeBundleInjector(api, { webhookConfigs: ['hooks'], crds: ['sites.staticsite.dev'] });
    const results = await injector.inject(BUNDLE);
    expect(results).to.deep.equal([
      {
        object: 'MutatingWebhookConfiguration/hooks',
        patched: ['a.staticsite.dev', 'b.staticsite.dev'],
        unchanged: [],
      },
      { object: 'ValidatingWebhookConfiguration/hooks', patched: ['v.staticsite.dev'], unchanged: [] },
      { object: 'CustomResourceDefinition/sites.staticsite.dev', patched: ['conversion'], unchanged: [] },
    ]);
    const [mPatch] = server.writes();
    expect(mPatch?.contentType).to.equal('application/json-patch+json');
    expect(mPatch?.body).to.deep.equal([
      { op: 'test', path: '/webhooks/0/name', value: 'a.staticsite.dev' },
      { op: 'add', path: '/webhooks/0/clientConfig/caBundle', value: B64 },
      { op: 'test', path: '/webhooks/1/name', value: 'b.staticsite.dev' },
      { op: 'add', path: '/webhooks/1/clientConfig/caBundle', value: B64 },
    ]);
    // Everything but the caBundles (and the resourceVersion) is as it was.
    const strip = (o: unknown) =>
      JSON.parse(JSON.stringify(o, (k, v) => (k === 'caBundle' || k === 'resourceVersion' ? undefined : v)));
    expect(strip(server.read(MWC, 'hooks'))).to.deep.equal(strip(before.m));
    expect(strip(server.read(VWC, 'hooks'))).to.deep.equal(strip(before.v));
    expect(strip(server.read(CRDS, 'sites.staticsite.dev'))).to.deep.equal(strip(before.c));
    const m = server.read<Hooks>(MWC, 'hooks');
    expect(m?.webhooks.map((w) => w.clientConfig.caBundle)).to.deep.equal([B64, B64]);
    const c = server.read<ConversionCrd>(CRDS, 'sites.staticsite.dev');
    expect(c?.spec.conversion.webhook.clientConfig.caBundle).to.equal(B64);
  });

  it('writes nothing when every entry already carries the bundle', async () => {
    const { server, api } = fake();
    server.seed(MWC, webhookConfig('hooks', [{ name: 'a.staticsite.dev', caBundle: B64 }]));
    const results = await new KubeBundleInjector(api, { webhookConfigs: ['mutating/hooks'], crds: [] }).inject(BUNDLE);
    expect(results).to.deep.equal([
      { object: 'MutatingWebhookConfiguration/hooks', patched: [], unchanged: ['a.staticsite.dev'] },
    ]);
    expect(server.writes()).to.deep.equal([]);
  });

  it('re-reads and retries when the list changed between read and patch (the test op fails)', async () => {
    const { server, api } = fake();
    server.seed(MWC, webhookConfig('hooks', [{ name: 'a.staticsite.dev' }]));
    server.failNext(on('PATCH', `${MWC}/hooks`), {
      status: 422,
      reason: 'Invalid',
      message: 'testing value /webhooks/0/name failed',
    });
    await new KubeBundleInjector(api, { webhookConfigs: ['mutating/hooks'], crds: [] }).inject(BUNDLE);
    expect(server.writes().map((r) => r.method)).to.deep.equal(['PATCH', 'PATCH']);
    const m = server.read<Hooks>(MWC, 'hooks');
    expect(m?.webhooks[0]?.clientConfig.caBundle).to.equal(B64);
  });

  it('a 422 that is not a failed test op (the server finds the bundle invalid) is reported at once, not retried', async () => {
    const { server, api } = fake();
    server.seed(CRDS, crd('sites.staticsite.dev', 'Webhook'));
    const message =
      'CustomResourceDefinition.apiextensions.k8s.io "sites.staticsite.dev" is invalid: spec.conversion.webhookClientConfig.caBundle: Invalid value: "...": unable to load root certificates';
    server.failNext(on('PATCH', `${CRDS}/sites.staticsite.dev`), { status: 422, reason: 'Invalid', message });
    const error = await expectCertsError(
      new KubeBundleInjector(api, { webhookConfigs: [], crds: ['sites.staticsite.dev'] }).inject(BUNDLE),
    );
    expect(error.code).to.equal('ApiError');
    expect(error.message).to.equal(`cannot patch CustomResourceDefinition sites.staticsite.dev: HTTP 422: ${message}`);
    expect(server.writes()).to.have.length(1);
  });

  it('a webhook configuration that exists in neither kind: names it and what to do', async () => {
    const error = await expectCertsError(
      new KubeBundleInjector(fake().api, { webhookConfigs: ['missing'], crds: [] }).inject(BUNDLE),
    );
    expect(error.code).to.equal('NotFound');
    expect(error.message).to.equal(
      'no MutatingWebhookConfiguration or ValidatingWebhookConfiguration named "missing" exists. Apply the webhook manifests first (kubectl apply -k manifests), or fix --webhook-config.',
    );
  });

  it('a CRD that does not exist: names it and what to do', async () => {
    const error = await expectCertsError(
      new KubeBundleInjector(fake().api, { webhookConfigs: [], crds: ['nope.staticsite.dev'] }).inject(BUNDLE),
    );
    expect(error.code).to.equal('NotFound');
    expect(error.message).to.equal(
      'CustomResourceDefinition nope.staticsite.dev does not exist. Install it first (kubectl apply -k manifests), or fix --crd.',
    );
  });

  it('a CRD without a conversion webhook is an error, and it is not patched', async () => {
    const { server, api } = fake();
    server.seed(CRDS, crd('sites.staticsite.dev', 'None'));
    const error = await expectCertsError(
      new KubeBundleInjector(api, { webhookConfigs: [], crds: ['sites.staticsite.dev'] }).inject(BUNDLE),
    );
    expect(error.code).to.equal('NoConversionWebhook');
    expect(error.message).to.equal(
      'CustomResourceDefinition sites.staticsite.dev has conversion strategy "None", so there is no caBundle to inject. Install the CRD with its conversion webhook (manifests/crds/full/crd.yaml), or drop --crd.',
    );
    expect(server.writes()).to.deep.equal([]);
  });

  it('no permission to patch: names the object and the ClusterRole rule it needs', async () => {
    const { server, api } = fake();
    server.seed(MWC, webhookConfig('hooks', [{ name: 'a.staticsite.dev' }]));
    const message =
      'mutatingwebhookconfigurations.admissionregistration.k8s.io "hooks" is forbidden: User "system:serviceaccount:ns:certs" cannot patch resource "mutatingwebhookconfigurations" in API group "admissionregistration.k8s.io" at the cluster scope';
    server.failNext(on('PATCH', `${MWC}/hooks`), { status: 403, reason: 'Forbidden', message });
    const error = await expectCertsError(
      new KubeBundleInjector(api, { webhookConfigs: ['mutating/hooks'], crds: [] }).inject(BUNDLE),
    );
    expect(error.code).to.equal('Forbidden');
    expect(error.message).to.equal(
      `cannot patch MutatingWebhookConfiguration hooks: ${message}. Bind the bootstrapper's ServiceAccount to the ClusterRole in manifests/certs/certs-rbac.yaml (get and patch on mutatingwebhookconfigurations with resourceNames [hooks]).`,
    );
  });

  it('parses --webhook-config prefixes', () => {
    expect(parseWebhookConfigRef('x')).to.deep.equal({
      kinds: ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'],
      name: 'x',
    });
    expect(parseWebhookConfigRef('validating/x')).to.deep.equal({
      kinds: ['ValidatingWebhookConfiguration'],
      name: 'x',
    });
    expect(() => parseWebhookConfigRef('other/x')).to.throw(CertsError, 'the prefix must be mutating/ or validating/');
  });
});
