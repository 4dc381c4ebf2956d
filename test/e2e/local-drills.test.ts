import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { eventually } from '../support/crds.ts';
import type { KubeHttp } from '../support/kube-http.ts';
import { LocalSystem } from '../support/local-system.ts';

const NS = 'drills';
const SITES = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
const DEPLOYMENT = `/apis/apps/v1/namespaces/${NS}/deployments/shop`;
const SERVICE = `/api/v1/namespaces/${NS}/services/shop`;

interface Site {
  metadata: { generation: number; finalizers?: string[]; deletionTimestamp?: string; resourceVersion: string };
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

  const site = async () => (await admin.get<Site>(`${SITES}/shop`)).body;
  const settled = (expectedReplicas: number) =>
    eventually(
      'the site settled and Ready',
      async () => {
        const s = await site();
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
    await eventually('children collected', async () => (await admin.get(DEPLOYMENT)).status === 404, 60_000);
  });

  it('6. a conflicting writer: the controller converges anyway', async () => {
    await admin.post(SITES, {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name: 'shop' },
      spec: { content: 'c', replicas: 1 },
    });
    let stop = false;
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        await admin.patch(`${SITES}/shop`, { metadata: { labels: { writer: String(i) } } });
      }
    })();
    await admin.patch(`${SITES}/shop`, { spec: { replicas: 3 } });
    try {
      await settled(3);
    } finally {
      stop = true;
      await writer;
    }
    const record = JSON.parse(await readFile(join(system.recordsDir, `${NS}_shop.json`), 'utf8'));
    expect(record.hostname).to.equal(`shop.${NS}.sites.staticsite.dev`);
  });
});
