import { X509Certificate } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { connect as tlsConnect } from 'node:tls';
import { expect } from 'chai';
import { pino } from 'pino';
import { buildCrd, CRD_NAME } from '../../api/index.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { type LoopbackCerts, loopbackCerts } from '../../devenv/webhook-certs.ts';
import { MUTATING_CONFIGS, VALIDATING_CONFIGS, webhookConfigurations } from '../../devenv/webhook-configs.ts';
import { hostnameInformer } from '../../webhook/informers/hostname-informer.ts';
import type { HostnameSource, RunningWebhook } from '../../webhook/server.ts';
import { startLoopbackWebhook } from '../support/loopback-servers.ts';
import { testCluster } from '../support/shared.ts';

const NS = 'webhook-e2e';
const v1 = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
const v1alpha1 = `/apis/staticsite.dev/v1alpha1/namespaces/${NS}/staticsites`;

function site(name: string, spec: Record<string, unknown>) {
  return { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', metadata: { name }, spec };
}

interface Site {
  metadata: { name: string; finalizers?: string[]; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
  apiVersion: string;
}

describe('e2e: the webhook behind the real API server', function () {
  this.timeout(120_000);
  let cp: ControlPlane;
  let certs: LoopbackCerts;
  let webhook: RunningWebhook;
  let hostnames: HostnameSource;

  before(async () => {
    ({ controlPlane: cp } = await testCluster());
    await cp.ensureNamespace(NS);
    certs = await loopbackCerts();
    const logger = pino({ level: 'silent' });
    hostnames = await hostnameInformer({ kubeconfig: cp.kubeconfigPath, logger });
    await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
    webhook = await startLoopbackWebhook(certs.dir, { logger, hostnames, certCheckIntervalMs: 200 });
    const url = `https://127.0.0.1:${webhook.port}`;
    await installCrd(
      cp.admin,
      buildCrd({ conversionClientConfig: { url: `${url}/convert`, caBundle: certs.caBundle } }),
    );
    const { mutating, validating } = webhookConfigurations(url, certs.caBundle);
    await cp.admin.must('POST', MUTATING_CONFIGS, mutating);
    await cp.admin.must('POST', VALIDATING_CONFIGS, validating);
    // The API server picks webhook configurations up asynchronously: wait until a create is mutated.
    await eventually('webhooks active', async () => {
      const res = await cp.admin.post<Site>(v1, site('probe', { content: 'x' }), { query: { dryRun: 'All' } });
      return res.body.metadata?.finalizers?.includes('staticsite.dev/external-record');
    });
  });

  after(async () => {
    await cp.admin.delete(`${MUTATING_CONFIGS}/staticsite-e2e`);
    await cp.admin.delete(`${VALIDATING_CONFIGS}/staticsite-e2e`);
    // Objects carry our finalizer: strip it so the CRD can go.
    const list = await cp.admin.get<{ items: Site[] }>(v1);
    for (const item of list.body.items ?? []) {
      await cp.admin.patch(`${v1}/${item.metadata.name}`, { metadata: { finalizers: null } });
    }
    await uninstallCrd(cp.admin, CRD_NAME);
    await webhook?.close();
    await rm(certs.dir, { recursive: true, force: true });
  });

  it('a create gets the finalizer, the schema defaults and the hostname default', async () => {
    const res = await cp.admin.post<Site>(v1, site('shop', { content: '<h1>shop</h1>' }));
    expect(res.status).to.equal(201);
    expect(res.body.metadata.finalizers).to.deep.equal(['staticsite.dev/external-record']);
    expect(res.body.spec).to.deep.equal({
      content: '<h1>shop</h1>',
      replicas: 1,
      tier: 'dev',
      hostname: `shop.${NS}.sites.test`,
    });
  });

  it('an unknown field is pruned with the API server warning', async () => {
    const res = await cp.admin.post<Site>(v1, site('pruned', { content: 'x', colour: 'red' }));
    expect(res.status).to.equal(201);
    expect(res.warnings).to.deep.equal(['unknown field "spec.colour"']);
    expect(res.body.spec).not.to.have.property('colour');
  });

  it('a CEL violation is refused with the CRD rule message', async () => {
    const res = await cp.admin.post<{ message: string }>(
      v1,
      site('prod1', { content: 'x', tier: 'prod', replicas: 1 }),
    );
    expect(res.status).to.equal(422);
    expect(res.body.message).to.equal(
      'StaticSite.staticsite.dev "prod1" is invalid: spec: Invalid value: prod sites need at least 2 replicas',
    );
  });

  it('a duplicate hostname is refused by the validating webhook in the API server wording', async () => {
    const first = await cp.admin.post<Site>(v1, site('first', { content: 'x', hostname: 'taken.example.com' }));
    expect(first.status).to.equal(201);
    await eventually(
      'the webhook cache sees the first site',
      async () => hostnames.index.holders('taken.example.com').length === 1,
    );
    const res = await cp.admin.post<{ message: string; code: number; reason: string }>(
      v1,
      site('second', { content: 'x', hostname: 'taken.example.com' }),
    );
    expect(res.status).to.equal(422);
    expect(res.body.reason).to.equal('Invalid');
    expect(res.body.message).to.equal(
      'admission webhook "validate.staticsite.dev" denied the request: StaticSite.staticsite.dev "second" is invalid: spec.hostname: Duplicate value: "taken.example.com"',
    );
  });

  it('a v1alpha1 object reads back as v1 with its hostname, and a v1 object as v1alpha1 with the annotation', async () => {
    const created = await cp.admin.post<Site>(v1alpha1, {
      apiVersion: 'staticsite.dev/v1alpha1',
      kind: 'StaticSite',
      metadata: { name: 'legacy', annotations: { 'staticsite.dev/hostname': 'legacy.example.com' } },
      spec: { content: 'old' },
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.apiVersion).to.equal('staticsite.dev/v1alpha1');
    const asV1 = await cp.admin.get<Site>(`${v1}/legacy`);
    expect(asV1.body.apiVersion).to.equal('staticsite.dev/v1');
    expect(asV1.body.spec.hostname).to.equal('legacy.example.com');
    expect(asV1.body.metadata.annotations ?? {}).not.to.have.property('staticsite.dev/hostname');

    const asAlpha = await cp.admin.get<Site>(`${v1alpha1}/shop`);
    expect(asAlpha.body.apiVersion).to.equal('staticsite.dev/v1alpha1');
    expect(asAlpha.body.spec).not.to.have.property('hostname');
    expect(asAlpha.body.metadata.annotations).to.deep.equal({ 'staticsite.dev/hostname': `shop.${NS}.sites.test` });
  });

  it('a cert rotation on disk during a stream of requests fails no request', async () => {
    const reloadsBefore = (await webhook.metrics.certReloads.get()).values[0]?.value ?? 0;
    let stop = false;
    const results: number[] = [];
    const stream = (async () => {
      let i = 0;
      while (!stop) {
        const res = await cp.admin.post(v1, site(`stream-${i++}`, { content: 'x' }), { query: { dryRun: 'All' } });
        results.push(res.status);
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    const rotatedPem = await certs.rotate();
    await eventually(
      'the new cert is served',
      async () => ((await webhook.metrics.certReloads.get()).values[0]?.value ?? 0) > reloadsBefore,
    );
    await new Promise((r) => setTimeout(r, 500));
    stop = true;
    await stream;
    expect(results.length).to.be.greaterThan(10);
    expect(results.filter((s) => s !== 201)).to.deep.equal([]);
    // A new handshake now gets the rotated certificate, trusted through the same CA bundle.
    const served = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect(
        { host: '127.0.0.1', port: webhook.port, ca: certs.ca.certPem, servername: 'localhost' },
        () => {
          resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
          socket.end();
        },
      );
      socket.on('error', reject);
    });
    expect(served).to.equal(new X509Certificate(rotatedPem).fingerprint256);
  });
});
