/**
 * Records the AdmissionReview kube-apiserver sends to the validating webhook for a StaticSite create
 * (after our mutating webhook ran), as test/fixtures/admission/apiserver-validate-create.json.
 * Only the uid and timestamps vary between runs. Run: node test/support/capture-admission-review.ts
 */
import { rm, writeFile } from 'node:fs/promises';
import { pino } from 'pino';
import { buildCrd, CRD_NAME } from '../../api/index.ts';
import { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { loopbackCerts } from '../../devenv/webhook-certs.ts';
import { MUTATING_CONFIGS, VALIDATING_CONFIGS, webhookConfigurations } from '../../devenv/webhook-configs.ts';
import type { AdmissionRequest } from '../../webhook/admission/review.ts';
import {
  createMutator,
  createValidator,
  createWebhookListener,
  SiteSchemas,
  WebhookMetrics,
} from '../../webhook/index.ts';
import { startBareHttps } from './loopback-servers.ts';

const NS = 'capture';
const output = new URL('../fixtures/admission/apiserver-validate-create.json', import.meta.url);

const certs = await loopbackCerts();
const schemas = new SiteSchemas();
const validate = createValidator({ schemas });
const captured: AdmissionRequest[] = [];
const listener = createWebhookListener({
  mutate: createMutator({ schemas, baseDomain: 'sites.example.com' }),
  validate: (request) => {
    if (request.name === 'shop') captured.push(request);
    return validate(request);
  },
  metrics: new WebhookMetrics(),
  logger: pino({ level: 'silent' }),
});
const server = await startBareHttps(certs.dir, listener);
const url = `https://127.0.0.1:${server.port}`;

const cp = await new ControlPlane().start();
try {
  await cp.ensureNamespace(NS);
  await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
  const { mutating, validating } = webhookConfigurations(url, certs.caBundle, 'staticsite-capture');
  await cp.admin.must('POST', MUTATING_CONFIGS, mutating);
  await cp.admin.must('POST', VALIDATING_CONFIGS, validating);
  const sites = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
  const site = {
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: { name: 'shop' },
    spec: { content: '<h1>shop</h1>', replicas: 2, tier: 'prod' },
  };
  // The API server picks the configurations up asynchronously: dry-run until the webhook is called.
  await eventually('validating webhook called', async () => {
    await cp.admin.post(sites, site, { query: { dryRun: 'All', fieldManager: 'kubectl-client-side-apply' } });
    return captured.length > 0;
  });
  captured.length = 0;
  await cp.admin.must('POST', sites, site, { query: { fieldManager: 'kubectl-client-side-apply' } });
  const request = captured.at(-1);
  if (!request) throw new Error('the validating webhook was not called');
  await writeFile(
    output,
    `${JSON.stringify({ kind: 'AdmissionReview', apiVersion: 'admission.k8s.io/v1', request })}\n`,
  );
  process.stdout.write(`wrote ${output.pathname}\n`);
  await cp.admin.patch(`${sites}/shop`, { metadata: { finalizers: null } });
  await uninstallCrd(cp.admin, CRD_NAME);
} finally {
  await cp.stop();
  await server.close();
  await rm(certs.dir, { recursive: true, force: true });
}
