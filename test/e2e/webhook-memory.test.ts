/**
 * Bounded memory, measured on the shipped process as the manifests run it: the webhook with a
 * kubeconfig (its StaticSite informer loaded, as in a cluster), its two review workers each with the
 * heap limit of webhook/server-settings.ts, and the environment of manifests/webhook/webhook.yaml,
 * hit by two concurrent maximum-size reviews of each shape that costs most, must stay alive, answer
 * every one, and peak under the manifest's memory limit.
 */
import { rm } from 'node:fs/promises';
import { expect } from 'chai';
import { buildCrd, CRD_NAME } from '../../api/index.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { ReviewClient } from '../../devenv/review-client.ts';
import { type LoopbackCerts, loopbackCerts } from '../../devenv/webhook-certs.ts';
import { WebhookProcess } from '../../devenv/webhook-process.ts';
import { DEFAULT_MAX_VALUES } from '../../webhook/review/codec.ts';
import { CONNECTION_SETTINGS } from '../../webhook/server-settings.ts';
import { testCluster } from '../support/shared.ts';
import { peakRssMi, webhookRuntime } from '../support/webhook-manifest.ts';

function review(object: Record<string, unknown>) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: crypto.randomUUID(),
      kind: { group: 'staticsite.dev', version: 'v1', kind: 'StaticSite' },
      resource: { group: 'staticsite.dev', version: 'v1', resource: 'staticsites' },
      name: 'big',
      namespace: 'web',
      operation: 'CREATE',
      object: { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', ...object },
    },
  };
}

/** The shapes that cost the process most per byte, each just under the body and value limits. */
const nearLimit = CONNECTION_SETTINGS.maxBodyBytes - 4096;
const SHAPES: Record<string, () => unknown> = {
  'a 7 MiB metadata.name (echoed in the denial)': () =>
    review({ metadata: { name: 'a'.repeat(nearLimit), namespace: 'web' }, spec: { content: 'x' } }),
  'a 7 MiB spec.content (too long)': () =>
    review({ metadata: { name: 'big', namespace: 'web' }, spec: { content: 'c'.repeat(nearLimit) } }),
  'unknown fields up to the value limit': () => {
    const spec: Record<string, unknown> = { content: 'x' };
    for (let i = 0; i < DEFAULT_MAX_VALUES - 100; i++) spec[`f${i}`] = i;
    return review({ metadata: { name: 'big', namespace: 'web' }, spec });
  },
  'invalid labels up to the value limit (two errors each)': () => {
    const labels: Record<string, string> = {};
    for (let i = 0; i < DEFAULT_MAX_VALUES - 100; i++) labels[`-k${i}`] = '-v-';
    return review({ metadata: { name: 'big', namespace: 'web', labels }, spec: { content: 'x' } });
  },
  'labels up to the value limit': () => {
    const labels: Record<string, string> = {};
    for (let i = 0; i < DEFAULT_MAX_VALUES - 100; i++) labels[`k${i}`] = 'v';
    return review({ metadata: { name: 'big', namespace: 'web', labels }, spec: { content: 'x' } });
  },
};

describe('e2e: the shipped webhook stays under its manifest memory limit', function () {
  this.timeout(180_000);
  let cp: ControlPlane;
  let certs: LoopbackCerts;
  let webhook: WebhookProcess;
  let client: ReviewClient;
  const { nodeOptions, memoryLimitMi: limitMi } = webhookRuntime();
  const peakMi = () => peakRssMi(webhook.process.pid);

  before(async () => {
    ({ controlPlane: cp } = await testCluster());
    await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
    certs = await loopbackCerts();
    webhook = await WebhookProcess.start({
      certDir: certs.dir,
      kubeconfig: cp.kubeconfigPath,
      env: { NODE_OPTIONS: nodeOptions },
    });
    client = new ReviewClient(webhook.url, certs.ca.certPem);
  });

  after(async () => {
    client?.close();
    await webhook?.stop();
    await uninstallCrd(cp.admin, CRD_NAME);
    await rm(certs.dir, { recursive: true, force: true });
  });

  it('the manifest leaves the heap limits to the review workers (a --max-old-space-size would override them)', () => {
    expect(nodeOptions).to.not.match(/--max-old-space-size/);
  });

  for (const [name, make] of Object.entries(SHAPES)) {
    it(`${name}: two at once, both answered, the process alive`, async () => {
      const answers = await Promise.all(['/validate', '/mutate'].map((path) => client.send(path, make())));
      for (const a of answers) {
        expect(a.status).to.equal(200);
        expect(JSON.stringify(a.body).length).to.be.below(8 << 20);
      }
      expect(webhook.process.running).to.equal(true);
    });
  }

  it(`the peak resident memory stayed under the manifest limit`, () => {
    const peak = peakMi();
    process.stdout.write(`      peak RSS ${peak.toFixed(0)} MiB of ${limitMi} MiB (NODE_OPTIONS ${nodeOptions})\n`);
    expect(peak).to.be.below(limitMi);
  });
});
