import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { eventually } from '../../devenv/crds.ts';
import type { KubeHttp } from '../../devenv/kube-http.ts';
import { LocalSystem } from '../../devenv/local-system.ts';
import { metricsReaderToken, observe } from '../../devenv/observed.ts';

const NS = 'drills';
const SITES = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
const DEPLOYMENT = `/apis/apps/v1/namespaces/${NS}/deployments/shop`;
const SERVICE = `/api/v1/namespaces/${NS}/services/shop`;

interface Site {
  metadata: {
    uid: string;
    generation: number;
    finalizers?: string[];
    deletionTimestamp?: string;
    resourceVersion: string;
  };
  spec: { content: string; replicas: number };
  status?: {
    observedGeneration?: number;
    readyReplicas?: number;
    conditions?: Array<{ type: string; status: string; reason: string }>;
  };
}

interface Deployment {
  spec: { replicas: number; template: { metadata: { annotations?: Record<string, string> } } };
}

/**
 * The full local deployment (local overlay, cert bootstrapper, webhook and controller as separate
 * processes with their own ServiceAccounts) walked through the six drills of the operator review.
 */
describe('e2e: the local deployment through the six drills', function () {
  this.timeout(300_000);
  const system = new LocalSystem();
  let admin: KubeHttp;

  const site = async (name = 'shop') => (await admin.get<Site>(`${SITES}/${name}`)).body;
  const settled = (expectedReplicas: number, name = 'shop') =>
    eventually(
      `${name} settled and Ready`,
      async () => {
        const s = await site(name);
        const ready = s.status?.conditions?.find((c) => c.type === 'Ready');
        return ready?.status === 'True' &&
          s.status?.observedGeneration === s.metadata.generation &&
          s.status?.readyReplicas === expectedReplicas
          ? s
          : undefined;
      },
      120_000,
      250,
    );

  before(async () => {
    await system.start();
    admin = system.controlPlane.admin;
    await system.controlPlane.ensureNamespace(NS);
  });
  after(async () => system.stop());

  it('1. create: finalizer, three owned children, the record, then Ready=True at the current generation', async () => {
    const created = await admin.post<Site>(SITES, {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name: 'shop' },
      spec: { content: '<h1>v1</h1>', replicas: 2 },
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.metadata.finalizers).to.deep.equal(['staticsite.dev/external-record']);
    await settled(2);
    for (const path of [`/api/v1/namespaces/${NS}/configmaps/shop`, DEPLOYMENT, SERVICE]) {
      const child = await admin.get<{ metadata: { ownerReferences?: Array<{ kind: string; controller?: boolean }> } }>(
        path,
      );
      expect(child.body.metadata.ownerReferences?.[0], path).to.deep.include({ kind: 'StaticSite', controller: true });
    }
    expect(existsSync(join(system.recordsDir, `${NS}_shop.json`))).to.equal(true);
  });

  it('2. spec change: the content change rolls the pods and the status catches up', async () => {
    const before = (await admin.get<Deployment>(DEPLOYMENT)).body.spec.template.metadata.annotations?.[
      'staticsite.dev/content-sha256'
    ];
    await admin.patch(`${SITES}/shop`, { spec: { content: '<h1>v2</h1>' } });
    await settled(2);
    const after = (await admin.get<Deployment>(DEPLOYMENT)).body.spec.template.metadata.annotations?.[
      'staticsite.dev/content-sha256'
    ];
    expect(after).to.be.a('string').and.not.equal(before);
  });

  it('3. status tampering is restored', async () => {
    const res = await admin.patch(`${SITES}/shop/status`, { status: { readyReplicas: 9 } });
    expect(res.status).to.equal(200);
    await settled(2);
  });

  it('4. child drift: a scaled Deployment and a deleted Service are reverted', async () => {
    await admin.patch(DEPLOYMENT, { spec: { replicas: 5 } });
    await admin.delete(SERVICE);
    await eventually('replicas back to 2 and the Service back', async () => {
      const d = await admin.get<Deployment>(DEPLOYMENT);
      const s = await admin.get(SERVICE);
      return d.body.spec.replicas === 2 && s.status === 200;
    });
  });

  it('5. delete with the controller stopped waits on the finalizer; the restart finishes it', async () => {
    await system.stopProcess('controller');
    await admin.delete(`${SITES}/shop`);
    await new Promise((r) => setTimeout(r, 2000));
    const waiting = await site();
    expect(waiting.metadata.deletionTimestamp).to.be.a('string');
    expect(existsSync(join(system.recordsDir, `${NS}_shop.json`))).to.equal(true);
    await system.startController();
    await eventually('the site gone', async () => (await admin.get(`${SITES}/shop`)).status === 404, 60_000);
    expect(existsSync(join(system.recordsDir, `${NS}_shop.json`))).to.equal(false);
    // The children are the garbage collector's: owned by the deleted site, they go once it notices.
    // It notices a custom resource installed after it started at its next discovery (every 30 s),
    // which the route drill of controller-gateway.test.ts waits for; here, the ownership suffices.
    const child = await admin.get<{ metadata: { ownerReferences?: Array<{ uid: string; controller?: boolean }> } }>(
      DEPLOYMENT,
    );
    if (child.status === 200) {
      const controller = child.body.metadata.ownerReferences?.find((r) => r.controller);
      expect(controller?.uid).to.equal(waiting.metadata.uid);
    }
  });

  it('6. a conflicting writer: the controller converges anyway', async () => {
    // A new name: shop's children may still wait for the garbage collector (drill 5).
    await admin.post(SITES, {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name: 'cart' },
      spec: { content: 'c', replicas: 1 },
    });
    let stop = false;
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        await admin.patch(`${SITES}/cart`, { metadata: { labels: { writer: String(i) } } });
      }
    })();
    await admin.patch(`${SITES}/cart`, { spec: { replicas: 3 } });
    try {
      await settled(3, 'cart');
    } finally {
      stop = true;
      await writer;
    }
    const record = JSON.parse(await readFile(join(system.recordsDir, `${NS}_cart.json`), 'utf8'));
    expect(record.hostname).to.equal(`cart.${NS}.sites.staticsite.dev`);
  });
});

describe('e2e: the local deployment through a CA rotation', function () {
  this.timeout(300_000);
  const system = new LocalSystem();
  let admin: KubeHttp;

  before(async () => {
    await system.start();
    admin = system.controlPlane.admin;
    await system.controlPlane.ensureNamespace(NS);
  });
  after(async () => system.stop());

  it('the API server converts through the injected bundle: a v1 site reads back as v1alpha1', async () => {
    await admin.must('POST', SITES, {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name: 'conv' },
      spec: { content: 'x', hostname: 'conv.example.com' },
    });
    const alpha = await admin.get<{ apiVersion: string; metadata: { annotations?: Record<string, string> } }>(
      `/apis/staticsite.dev/v1alpha1/namespaces/${NS}/staticsites/conv`,
    );
    expect(alpha.status).to.equal(200);
    expect(alpha.body.apiVersion).to.equal('staticsite.dev/v1alpha1');
    expect(alpha.body.metadata.annotations?.['staticsite.dev/hostname']).to.equal('conv.example.com');
  });

  it('a forced CA rotation during a stream of creates through the API server fails no request', async () => {
    const before = await readFile(join(system.certDir, 'ca.crt'), 'utf8');
    await system.stopProcess('certs');
    let stop = false;
    const statuses: number[] = [];
    const stream = (async () => {
      for (let i = 0; !stop; i++) {
        const res = await admin.post(
          SITES,
          { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', metadata: { name: `s${i}` }, spec: { content: 'x' } },
          { query: { dryRun: 'All' } },
        );
        statuses.push(res.status);
      }
    })();
    try {
      const rotated = await system.runCli([...system.certsArgs(), '--rotate-ca']);
      expect(rotated.code, rotated.output).to.equal(0);
      const after = await readFile(join(system.certDir, 'ca.crt'), 'utf8');
      expect(after).to.not.equal(before);
      expect(after).to.include(before.trim()); // old CA kept in the bundle during the overlap
      // The webhook reloads the new serving cert (signed by the new CA) from disk.
      const token = await metricsReaderToken(system.controlPlane);
      await eventually('the webhook serves the new certificate', async () => {
        const metrics = (await observe('https://127.0.0.1:8080/metrics', token)).text;
        return /staticsite_webhook_certificate_reloads_total [1-9]/.test(metrics);
      });
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      stop = true;
      await stream;
    }
    expect(statuses.length).to.be.greaterThan(10);
    expect(statuses.filter((s) => s !== 201)).to.deep.equal([]);
  });
});
