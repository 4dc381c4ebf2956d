/**
 * The webhook users run: `node dist/bin/staticsite.js webhook` (what the image runs), with TLS from
 * `staticsite certs bootstrap`, started as a process. Every admission fixture is posted to it; the
 * rule verdicts are compared with what kube-apiserver itself answers for the same objects under
 * the full CRD (schema and CEL rules), first standalone, then behind the API server with the
 * webhook-only CRD (no CEL rules: the webhook enforces them).
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { buildCrd, CRD_NAME } from '../../api/index.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { ReviewClient } from '../../devenv/review-client.ts';
import { MUTATING_CONFIGS, VALIDATING_CONFIGS, webhookConfigurations } from '../../devenv/webhook-configs.ts';
import { builtCli, WebhookProcess } from '../../devenv/webhook-process.ts';
import { testCluster } from '../support/shared.ts';

const run = promisify(execFile);
const fixturesDir = new URL('../fixtures/admission/', import.meta.url).pathname;
const NS = 'web';
const sites = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;

interface Review {
  apiVersion: string;
  request: {
    uid: string;
    operation: string;
    kind: { kind: string; version: string };
    object?: SiteObject;
    oldObject?: SiteObject;
  };
}
interface SiteObject {
  metadata: { name: string; namespace?: string; finalizers?: string[]; resourceVersion?: string };
  spec: Record<string, unknown>;
}
interface ApiStatus {
  kind?: string;
  code?: number;
  reason?: string;
  message?: string;
}

const fixtures = readdirSync(fixturesDir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => ({ file, review: JSON.parse(readFileSync(join(fixturesDir, file), 'utf8')) as Review }));
/** The fixtures whose verdict the API server decides with the CEL rules of the full CRD. */
const RULE_FIXTURES = ['create-prod-one-replica.json', 'update-tier-change.json', 'create-invalid-hostname.json'];

function withoutFinalizers(object: SiteObject): SiteObject {
  const { finalizers: _, ...metadata } = object.metadata;
  return { ...object, metadata };
}

async function clearSites(cp: ControlPlane): Promise<void> {
  const list = await cp.admin.get<{ items?: SiteObject[] }>(sites);
  for (const item of list.body.items ?? []) {
    await cp.admin.patch(`${sites}/${item.metadata.name}`, { metadata: { finalizers: null } });
    await cp.admin.delete(`${sites}/${item.metadata.name}`);
  }
  await eventually('no StaticSites left', async () => {
    const left = await cp.admin.get<{ items?: SiteObject[] }>(sites);
    return (left.body.items ?? []).length === 0;
  });
}

/** What kube-apiserver answers for a fixture's write under the CRD installed now. */
async function apiServerAnswer(cp: ControlPlane, review: Review): Promise<ApiStatus> {
  const { request: req } = review;
  const object = req.object as SiteObject;
  if (req.operation === 'CREATE') {
    const res = await cp.admin.post<ApiStatus>(sites, object, { query: { dryRun: 'All' } });
    return res.body;
  }
  const stored = await cp.admin.post<SiteObject>(sites, withoutFinalizers(req.oldObject as SiteObject));
  expect(stored.status, JSON.stringify(stored.body)).to.equal(201);
  const next = { ...withoutFinalizers(object), metadata: { ...withoutFinalizers(object).metadata } };
  next.metadata.resourceVersion = stored.body.metadata.resourceVersion;
  const res = await cp.admin.put<ApiStatus>(`${sites}/${object.metadata.name}`, next, { query: { dryRun: 'All' } });
  await clearSites(cp);
  return res.body;
}

describe('e2e: the shipped webhook process (node dist/bin/staticsite.js webhook)', function () {
  this.timeout(180_000);
  let cp: ControlPlane;
  let certDir: string;
  let ca: string;
  let caBundle: string;
  /** The API server's 422 for each rule fixture under the full CRD. */
  const expected = new Map<string, ApiStatus>();

  before(async () => {
    ({ controlPlane: cp } = await testCluster());
    await cp.ensureNamespace(NS);
    certDir = await mkdtemp(join(tmpdir(), 'shipped-webhook-certs-'));
    // The README's command for standalone use.
    await run(process.execPath, [
      builtCli(),
      'certs',
      'bootstrap',
      '--service=staticsite-webhook',
      '--namespace=staticsite-system',
      '--san=127.0.0.1',
      `--out-dir=${certDir}`,
    ]);
    ca = readFileSync(join(certDir, 'ca.crt'), 'utf8');
    caBundle = Buffer.from(ca).toString('base64');

    // The full CRD with its CEL rules, no webhook: the API server's own verdicts.
    await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
    for (const name of RULE_FIXTURES) {
      const fixture = fixtures.find((f) => f.file === name);
      if (!fixture) throw new Error(`fixture ${name} is missing`);
      const answer = await apiServerAnswer(cp, fixture.review);
      expect(answer.code, `${name}: ${JSON.stringify(answer)}`).to.equal(422);
      expected.set(name, answer);
    }
    await uninstallCrd(cp.admin, CRD_NAME);
  });

  after(async () => {
    await rm(certDir, { recursive: true, force: true });
  });

  describe('standalone (no kubeconfig)', () => {
    let webhook: WebhookProcess;
    let client: ReviewClient;
    before(async () => {
      webhook = await WebhookProcess.start({ certDir });
      client = new ReviewClient(webhook.url, ca);
    });
    after(async () => {
      client?.close();
      await webhook?.stop();
    });

    for (const { file, review } of fixtures) {
      it(`${file}: /validate and /mutate answer with its uid, as the API server would`, async () => {
        for (const path of ['/validate', '/mutate']) {
          const res = await client.send(path, review);
          expect(res.status, path).to.equal(200);
          expect(res.body.response.uid, path).to.equal(review.request.uid);
        }
        const { response } = await client.post('/validate', review);
        const apiServer = expected.get(file);
        if (apiServer) {
          expect(response.allowed).to.equal(false);
          expect(response.status).to.deep.include({
            code: apiServer.code,
            reason: apiServer.reason,
            message: apiServer.message,
          });
        } else if (review.request.kind.kind !== 'StaticSite') {
          expect(response).to.deep.include({ allowed: false });
          expect(response.status?.code).to.equal(400);
        } else {
          expect(response.allowed, JSON.stringify(response.status)).to.equal(true);
        }
      });
    }
  });

  describe('with a kubeconfig, behind the API server with the webhook-only CRD (no CEL rules in it)', () => {
    let webhook: WebhookProcess;
    before(async () => {
      await installCrd(cp.admin, buildCrd({ schemaOnly: true, withoutCelRules: true }));
      webhook = await WebhookProcess.start({ certDir, kubeconfig: cp.kubeconfigPath });
      const { mutating, validating } = webhookConfigurations(webhook.url, caBundle, 'staticsite-shipped');
      await cp.admin.must('POST', MUTATING_CONFIGS, mutating);
      await cp.admin.must('POST', VALIDATING_CONFIGS, validating);
      await eventually('webhooks active', async () => {
        const probe = { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', metadata: { name: 'probe' } };
        const res = await cp.admin.post<SiteObject>(
          sites,
          { ...probe, spec: { content: 'x' } },
          { query: { dryRun: 'All' } },
        );
        return res.body.metadata?.finalizers?.includes('staticsite.dev/external-record');
      });
    });
    after(async () => {
      await cp.admin.delete(`${MUTATING_CONFIGS}/staticsite-shipped`);
      await cp.admin.delete(`${VALIDATING_CONFIGS}/staticsite-shipped`);
      await clearSites(cp);
      await uninstallCrd(cp.admin, CRD_NAME);
      await webhook?.stop();
    });

    const denial = (name: string) => {
      const apiServer = expected.get(name);
      return `admission webhook "validate.staticsite.dev" denied the request: ${apiServer?.message}`;
    };
    const objectOf = (name: string, which: 'object' | 'oldObject' = 'object') =>
      withoutFinalizers(fixtures.find((f) => f.file === name)?.review.request[which] as SiteObject);

    it('denies prod with one replica with the API server message', async () => {
      const res = await cp.admin.post<ApiStatus>(sites, objectOf('create-prod-one-replica.json'));
      expect(res.body).to.deep.include({ code: 422, message: denial('create-prod-one-replica.json') });
    });

    it('denies an invalid hostname with the API server message', async () => {
      const res = await cp.admin.post<ApiStatus>(sites, objectOf('create-invalid-hostname.json'));
      expect(res.body).to.deep.include({ code: 422, message: denial('create-invalid-hostname.json') });
    });

    it('denies a tier change (a transition rule) with the API server message', async () => {
      const stored = await cp.admin.post<SiteObject>(sites, objectOf('update-tier-change.json', 'oldObject'));
      expect(stored.status, JSON.stringify(stored.body)).to.equal(201);
      const next = objectOf('update-tier-change.json');
      next.metadata.resourceVersion = stored.body.metadata.resourceVersion;
      const res = await cp.admin.put<ApiStatus>(`${sites}/${next.metadata.name}`, next);
      expect(res.body).to.deep.include({ code: 422, message: denial('update-tier-change.json') });
    });
  });
});
