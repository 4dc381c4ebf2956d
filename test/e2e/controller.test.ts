import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadAll } from 'js-yaml';
import { buildCrd, CRD_NAME, FINALIZER } from '../../api/index.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd, uninstallCrd } from '../../devenv/crds.ts';
import type { NodeSimulator } from '../../devenv/node-simulator.ts';
import { CONTROLLER_RUNTIME_DASHBOARD, samples } from '../fixtures/controller-runtime-dashboard.ts';
import { ApiProxy } from '../support/controller-api-proxy.ts';
import {
  applyControllerRbac,
  ControllerProcess,
  credentialsVia,
  removeControllerRbac,
} from '../support/controller-harness.ts';
import { testCluster } from '../support/shared.ts';

const NS = 'ctrl-e2e';
const SYS = 'ctrl-system';
const SA = 'staticsite-controller';
const SITES = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const DEPLOYS = `/apis/apps/v1/namespaces/${NS}/deployments`;
const SVCS = `/api/v1/namespaces/${NS}/services`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
const LEASE = `/apis/coordination.k8s.io/v1/namespaces/${SYS}/leases/staticsite-controller`;
const LEASE_SECONDS = 6;
const RETRY_SECONDS = 1;

interface Meta {
  name: string;
  uid: string;
  generation?: number;
  resourceVersion: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: Array<{ uid: string; controller?: boolean; blockOwnerDeletion?: boolean; kind: string }>;
}
interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}
interface Site {
  metadata: Meta;
  spec: { content: string; replicas: number; hostname?: string };
  status?: { observedGeneration?: number; readyReplicas?: number; url?: string; conditions?: Condition[] };
}
interface Deployment {
  metadata: Meta;
  spec: { replicas: number; template: { metadata: { annotations?: Record<string, string> } } };
}
interface Pod {
  metadata: Meta;
}
interface Lease {
  spec: { holderIdentity?: string; renewTime?: string; acquireTime?: string; leaseTransitions?: number };
}

function newSite(name: string, spec: Record<string, unknown>) {
  return { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', metadata: { name, namespace: NS }, spec };
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('e2e: the StaticSite controller, as its own ServiceAccount on a real control plane', function () {
  this.timeout(180_000);
  let cp: ControlPlane;
  let nodes: NodeSimulator;
  let proxy: ApiProxy;
  let recordsDir: string;
  let logDir: string;
  const kubeconfigs: string[] = [];
  const running = new Set<ControllerProcess>();
  let leader: ControllerProcess;

  const ready = (s: Site | undefined) => s?.status?.conditions?.find((c) => c.type === 'Ready');
  const getSite = async (name: string) => {
    const res = await cp.admin.get<Site>(`${SITES}/${name}`);
    return res.status === 200 ? res.body : undefined;
  };
  const readRecord = async (name: string) => {
    try {
      return JSON.parse(await readFile(join(recordsDir, `${NS}_${name}.json`), 'utf8')) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  };
  /** Ready=True for the current generation: what "converged" means. */
  const converged = (name: string) =>
    eventually(
      `${name} Ready with observedGeneration == generation`,
      async () => {
        const s = await getSite(name);
        return ready(s)?.status === 'True' && s?.status?.observedGeneration === s?.metadata.generation ? s : undefined;
      },
      90_000,
    );

  /** Converged, and the rollout finished to the last pod: nothing is left to change. */
  const settled = (name: string) =>
    eventually(
      `${name} settled`,
      async () => {
        const s = await converged(name);
        const d = (await cp.admin.get<Deployment & { status?: Record<string, number> }>(`${DEPLOYS}/${name}`)).body;
        const st = d.status ?? {};
        return s.status?.readyReplicas === s.spec.replicas &&
          st.replicas === s.spec.replicas &&
          st.readyReplicas === s.spec.replicas &&
          st.updatedReplicas === s.spec.replicas &&
          st.availableReplicas === s.spec.replicas &&
          st.observedGeneration === d.metadata.generation
          ? s
          : undefined;
      },
      90_000,
    );

  async function startController(identity: string, kubeconfig: string, extra: string[] = []) {
    const c = await ControllerProcess.start({
      controlPlane: cp,
      identity,
      kubeconfig,
      logDir,
      args: [
        '--namespace',
        NS,
        '--records-dir',
        recordsDir,
        '--workers',
        '4',
        '--leader-elect',
        '--leader-elect-namespace',
        SYS,
        '--leader-elect-lease-duration',
        `${LEASE_SECONDS}s`,
        '--leader-elect-renew-deadline',
        '4s',
        '--leader-elect-retry-period',
        `${RETRY_SECONDS}s`,
        '--resync-period',
        '2s',
        '--watch-down-threshold',
        '2s',
        ...extra,
      ],
    });
    running.add(c);
    await eventually(`${identity} /readyz`, async () => (await c.probe('/readyz')) === 200, 30_000);
    return c;
  }

  before(async () => {
    ({ controlPlane: cp, nodes } = await testCluster());
    await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
    await cp.ensureNamespace(NS);
    await applyControllerRbac(cp, SYS);
    proxy = new ApiProxy(cp.apiServerUrl, cp.certificateAuthority);
    await proxy.start();
    recordsDir = await mkdtemp(join(tmpdir(), 'ctrl-records-'));
    logDir = await mkdtemp(join(tmpdir(), 'ctrl-logs-'));
    // Two tokens of the one ServiceAccount, so the proxy can tell the replicas apart.
    for (const user of ['replica-a', 'replica-b']) {
      const creds = await cp.serviceAccountCredentials(SYS, SA);
      kubeconfigs.push(await cp.writeKubeconfig(`ctrl-${user}.kubeconfig`, credentialsVia(proxy.url, creds), user));
    }
    leader = await startController('replica-a', kubeconfigs[0] as string);
    await eventually('replica-a leads', async () => (await leader.metric('leader_election_master_status')) === 1);
  });

  after(async function () {
    this.timeout(120_000);
    nodes?.setHold(undefined);
    for (const c of running) await c.stop();
    // Whatever state a failed test left: no finalizer may keep the CRD from going.
    const left = await cp.admin.get<{ items: Site[] }>(SITES);
    for (const s of left.body?.items ?? []) {
      await cp.admin.patch(`${SITES}/${s.metadata.name}`, { metadata: { finalizers: null } });
    }
    await proxy?.stop();
    await cp?.admin.delete(`/api/v1/namespaces/${NS}`);
    await uninstallCrd(cp.admin, CRD_NAME);
    await removeControllerRbac(cp, SYS);
    await rm(recordsDir, { recursive: true, force: true });
    if (!process.env.KEEP_CONTROLLER_LOGS) await rm(logDir, { recursive: true, force: true });
    else process.stderr.write(`controller logs: ${logDir}\n`);
  });

  it('runs under the least-privilege Role: the ServiceAccount may delete nothing but Leases in its own namespace', async () => {
    const as = `system:serviceaccount:${SYS}:${SA}`;
    for (const resource of ['staticsites.staticsite.dev', 'configmaps', 'deployments.apps', 'services', 'pods']) {
      const res = await cp.kubectl(['auth', 'can-i', 'delete', resource, '-n', NS, '--as', as]);
      expect(res.stdout.trim(), `delete ${resource}`).to.equal('no');
    }
    // The hostname claims: Leases in the controller's namespace, nowhere else.
    const leaseHere = await cp.kubectl([
      'auth',
      'can-i',
      'delete',
      'leases.coordination.k8s.io',
      '-n',
      SYS,
      '--as',
      as,
    ]);
    expect(leaseHere.stdout.trim()).to.equal('yes');
    const leaseThere = await cp.kubectl([
      'auth',
      'can-i',
      'delete',
      'leases.coordination.k8s.io',
      '-n',
      NS,
      '--as',
      as,
    ]);
    expect(leaseThere.stdout.trim()).to.equal('no');
    const update = await cp.kubectl([
      'auth',
      'can-i',
      'update',
      'staticsites.staticsite.dev/status',
      '-n',
      NS,
      '--as',
      as,
    ]);
    expect(update.stdout.trim()).to.equal('yes');
  });

  it('create: finalizer, three owned children, the record file, then Ready=True once the pods are ready', async () => {
    await cp.admin.must('POST', SITES, newSite('alpha', { content: '<h1>alpha</h1>', replicas: 2 }));
    const withFinalizer = await eventually('finalizer', async () => {
      const s = await getSite('alpha');
      return s?.metadata.finalizers?.includes(FINALIZER) ? s : undefined;
    });
    const uid = withFinalizer.metadata.uid;
    for (const path of [CMS, DEPLOYS, SVCS]) {
      const child = await eventually(`${path}/alpha`, async () => {
        const res = await cp.admin.get<{ metadata: Meta }>(`${path}/alpha`);
        return res.status === 200 ? res.body : undefined;
      });
      expect(child.metadata.ownerReferences).to.have.length(1);
      expect(child.metadata.ownerReferences?.[0]).to.include({
        uid,
        controller: true,
        blockOwnerDeletion: true,
        kind: 'StaticSite',
      });
      expect(child.metadata.labels).to.include({ 'app.kubernetes.io/managed-by': 'staticsite-controller' });
    }
    const record = await eventually('record file', () => readRecord('alpha'));
    expect(record).to.deep.equal({
      hostname: `alpha.${NS}.sites.staticsite.dev`,
      service: `alpha.${NS}.svc.cluster.local`,
      port: 80,
      site: `${NS}/alpha`,
    });
    const s = await converged('alpha');
    expect(s.status?.readyReplicas).to.equal(2);
    expect(s.status?.url).to.equal(`http://alpha.${NS}.sites.staticsite.dev/`);
    // The condition reads exactly like the real kubectl's rollout status.
    const kubectl = await cp.kubectl(['rollout', 'status', '--watch=false', 'deployment/alpha', '-n', NS]);
    expect(ready(s)?.message).to.equal(kubectl.stdout.trim());
    expect(ready(s)?.reason).to.equal('Available');
    // Progressing and Degraded, and the CRD's printer columns as the real kubectl prints them.
    const wide = await cp.kubectl([
      'get',
      'staticsites.staticsite.dev',
      'alpha',
      '-n',
      NS,
      '-o',
      'wide',
      '--no-headers',
    ]);
    expect(wide.stdout.trim().split(/\s+/).slice(0, 7)).to.deep.equal([
      'alpha',
      '2',
      '2',
      'True',
      'Available',
      'False',
      'False',
    ]);
    const condition = (type: string) => s.status?.conditions?.find((c) => c.type === type);
    expect(condition('Progressing')).to.include({
      status: 'False',
      reason: 'Available',
      observedGeneration: s.metadata.generation,
    });
    expect(condition('Degraded')).to.include({ status: 'False', reason: 'AsExpected', message: '' });
    const events = await cp.kubectl([
      'get',
      'events',
      '-n',
      NS,
      '--field-selector',
      'involvedObject.name=alpha,involvedObject.kind=StaticSite',
      '-o',
      'jsonpath={.items[*].reason}',
    ]);
    expect(events.stdout.split(' ')).to.include.members(['Created', 'RecordPublished']);
  });

  it('a spec change: generation stays ahead of observedGeneration until the change is live', async () => {
    nodes.setHold((pod) => pod.namespace === NS && pod.name.startsWith('alpha-'));
    const before = await getSite('alpha');
    await cp.admin.must(
      'PATCH',
      `${SITES}/alpha`,
      { spec: { replicas: 3 } },
      { contentType: 'application/merge-patch+json' },
    );
    const midway = await eventually('the controller acted on the change but it is not live yet', async () => {
      const d = (await cp.admin.get<Deployment>(`${DEPLOYS}/alpha`)).body;
      const s = await getSite('alpha');
      const c = ready(s);
      return d.spec.replicas === 3 && c?.status === 'False' && c.observedGeneration === s?.metadata.generation
        ? s
        : undefined;
    });
    expect(midway.metadata.generation).to.equal((before?.metadata.generation ?? 0) + 1);
    expect(midway.status?.observedGeneration).to.equal(before?.metadata.generation);
    // Still the kubectl wording, whatever the rollout's step.
    await eventually('condition message equals kubectl rollout status', async () => {
      const kubectl = await cp.kubectl(['rollout', 'status', '--watch=false', 'deployment/alpha', '-n', NS]);
      return ready(await getSite('alpha'))?.message === kubectl.stdout.trim();
    });
    nodes.setHold(undefined);
    const done = await converged('alpha');
    expect(done.status?.observedGeneration).to.equal(midway.metadata.generation);
    expect(done.status?.readyReplicas).to.equal(3);
  });

  it('a content change rolls the Deployment’s pods', async () => {
    const podsOf = async () =>
      (await cp.admin.must<{ items: Pod[] }>('GET', PODS)).items.filter(
        (p) => p.metadata.name.startsWith('alpha-') && !p.metadata.deletionTimestamp,
      );
    const oldUids = new Set((await podsOf()).map((p) => p.metadata.uid));
    expect(oldUids.size).to.equal(3);
    await cp.admin.must(
      'PATCH',
      `${SITES}/alpha`,
      { spec: { content: '<h1>alpha v2</h1>' } },
      { contentType: 'application/merge-patch+json' },
    );
    const hash = sha256('<h1>alpha v2</h1>');
    await eventually(
      'every pod replaced by one carrying the new content hash',
      async () => {
        const pods = await podsOf();
        return (
          pods.length === 3 &&
          pods.every(
            (p) => !oldUids.has(p.metadata.uid) && p.metadata.annotations?.['staticsite.dev/content-sha256'] === hash,
          )
        );
      },
      90_000,
    );
    const cm = await cp.admin.must<{ data: Record<string, string> }>('GET', `${CMS}/alpha`);
    expect(cm.data['index.html']).to.equal('<h1>alpha v2</h1>');
    await settled('alpha');
  });

  it('status tampering is restored', async () => {
    const s = (await getSite('alpha')) as Site;
    const res = await cp.admin.put(`${SITES}/alpha/status`, {
      ...s,
      status: {
        observedGeneration: 1,
        readyReplicas: 0,
        url: 'http://evil.example/',
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            reason: 'Tampered',
            message: 'x',
            lastTransitionTime: '2020-01-01T00:00:00Z',
          },
        ],
      },
    });
    expect(res.status).to.equal(200);
    const restored = await settled('alpha');
    expect(restored.status?.url).to.equal(`http://alpha.${NS}.sites.staticsite.dev/`);
    expect(restored.status?.readyReplicas).to.equal(3);
    expect(ready(restored)?.reason).to.equal('Available');
  });

  it('kubectl scale of the Deployment is reverted', async () => {
    const scaled = await cp.kubectl(['scale', 'deployment/alpha', '--replicas=7', '-n', NS]);
    expect(scaled.code).to.equal(0);
    await eventually('replicas back to 3', async () => {
      const d = (await cp.admin.get<Deployment>(`${DEPLOYS}/alpha`)).body;
      return d.spec.replicas === 3;
    });
    await settled('alpha');
  });

  for (const [kind, path] of [
    ['configmap', CMS],
    ['deployment', DEPLOYS],
    ['service', SVCS],
  ] as const) {
    it(`deleting the ${kind} is reverted`, async () => {
      const old = (await cp.admin.must<{ metadata: Meta }>('GET', `${path}/alpha`)).metadata.uid;
      const deleted = await cp.kubectl(['delete', kind, 'alpha', '-n', NS, '--wait=false']);
      expect(deleted.code).to.equal(0);
      const fresh = await eventually(`a new ${kind}`, async () => {
        const res = await cp.admin.get<{ metadata: Meta }>(`${path}/alpha`);
        return res.status === 200 && res.body.metadata.uid !== old && !res.body.metadata.deletionTimestamp
          ? res.body
          : undefined;
      });
      expect(fresh.metadata.ownerReferences?.[0]).to.include({ controller: true, kind: 'StaticSite' });
      await settled('alpha');
    });
  }

  it('an existing object that someone else controls is reported and never adopted', async () => {
    await cp.admin.must('POST', CMS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'beta' },
      data: { 'index.html': 'theirs' },
    });
    await cp.admin.must('POST', SITES, newSite('beta', { content: 'ours' }));
    const s = await eventually('ChildConflict', async () => {
      const site = await getSite('beta');
      return ready(site)?.reason === 'ChildConflict' ? site : undefined;
    });
    expect(ready(s)?.message).to.equal(
      'ConfigMap "beta" already exists and is controlled by no controller, not by this StaticSite; it is left alone',
    );
    const cm = await cp.admin.must<{ metadata: Meta; data: Record<string, string> }>('GET', `${CMS}/beta`);
    expect(cm.data).to.deep.equal({ 'index.html': 'theirs' });
    expect(cm.metadata.ownerReferences).to.equal(undefined);
    const warnings = await cp.kubectl([
      'get',
      'events',
      '-n',
      NS,
      '--field-selector',
      'involvedObject.name=beta,type=Warning',
      '-o',
      'jsonpath={.items[*].reason}',
    ]);
    expect(warnings.stdout.split(' ')).to.include('ChildConflict');
    // Once the other object is gone, the site converges.
    await cp.admin.must('DELETE', `${CMS}/beta`);
    await converged('beta');
  });

  it('a concurrent writer causing 409 Conflicts converges, keeping the other writer’s fields', async () => {
    await cp.admin.must('POST', SITES, newSite('gamma', { content: 'g', replicas: 1 }));
    await converged('gamma');
    let injected = 0;
    proxy.beforeForward = async ({ method, path }) => {
      if (method !== 'PUT' || path !== `${DEPLOYS}/gamma` || injected >= 3) return;
      injected++;
      await cp.admin.must(
        'PATCH',
        `${DEPLOYS}/gamma`,
        { metadata: { annotations: { 'example.com/writer': String(injected) } } },
        { contentType: 'application/merge-patch+json' },
      );
    };
    const mark = proxy.requests.length;
    await cp.admin.must(
      'PATCH',
      `${SITES}/gamma`,
      { spec: { replicas: 2 } },
      { contentType: 'application/merge-patch+json' },
    );
    const s = await converged('gamma');
    proxy.beforeForward = undefined;
    const conflicts = proxy.requests
      .slice(mark)
      .filter((r) => r.method === 'PUT' && r.path === `${DEPLOYS}/gamma` && r.status === 409);
    // The three we forced, perhaps more: a cache a moment behind the deployment controller's writes is routine.
    expect(conflicts.length).to.be.at.least(3);
    const d = (await cp.admin.get<Deployment>(`${DEPLOYS}/gamma`)).body;
    expect(d.spec.replicas).to.equal(2);
    expect(d.metadata.annotations?.['example.com/writer']).to.equal('3');
    expect(s.status?.readyReplicas).to.equal(2);
  });

  it('a forced watch expiry (410) relists and converges; a site deleted in the gap loses its record; /readyz shows the outage', async () => {
    await cp.admin.must('POST', SITES, newSite('delta', { content: 'd' }));
    await converged('delta');
    await eventually('delta record', () => readRecord('delta'));
    const expiredBefore = await leader.metric('staticsite_informer_relists_total', {
      informer: 'staticsites',
      reason: 'expired',
    });
    // The watch of sites goes down and stays down.
    proxy.holdWatches((path) => path === SITES);
    expect(proxy.cutWatches((path) => path === SITES)).to.equal(1);
    // 500: k8s.io/apiserver healthz.go answers a failing check with http.StatusInternalServerError.
    await eventually('/readyz fails while the watch is down', async () => (await leader.probe('/readyz')) === 500);
    // Meanwhile: delta is deleted and its finalizer force-removed; alpha's spec changes.
    await cp.admin.must('DELETE', `${SITES}/delta`);
    await cp.admin.must(
      'PATCH',
      `${SITES}/delta`,
      { metadata: { finalizers: null } },
      { contentType: 'application/merge-patch+json' },
    );
    await eventually('delta gone', async () => (await getSite('delta')) === undefined);
    await cp.admin.must(
      'PATCH',
      `${SITES}/alpha`,
      { spec: { replicas: 2 } },
      { contentType: 'application/merge-patch+json' },
    );
    // The watch comes back from a resourceVersion the server no longer has: 410 Gone, then a relist.
    proxy.expireNextWatch(SITES);
    proxy.holdWatches(undefined);
    await eventually(
      'one relist after 410 Gone',
      async () =>
        (await leader.metric('staticsite_informer_relists_total', { informer: 'staticsites', reason: 'expired' })) ===
        expiredBefore + 1,
    );
    await eventually('delta record removed', async () => (await readRecord('delta')) === undefined);
    await settled('alpha');
    const expiredWatch = proxy.requests.find(
      (r) => r.watch && r.path === SITES && r.query.get('resourceVersion') === '1',
    );
    expect(expiredWatch?.status).to.equal(200); // the 410 arrives as an ERROR event inside the stream
    await eventually('/readyz recovers', async () => (await leader.probe('/readyz')) === 200);
  });

  it('a settled site makes zero writes over repeated resyncs', async () => {
    const sites = ['alpha', 'beta', 'gamma'];
    for (const name of sites) await settled(name);
    // kube-controller-manager keeps writing a Deployment's status after its pods are ready (available
    // replicas, conditions), so a Deployment is compared by generation, which only spec writes move;
    // metadata writes of ours would show among the proxied writes below.
    const versions = async () =>
      Promise.all(
        sites.flatMap((name) =>
          [SITES, CMS, DEPLOYS, SVCS].map(async (p) => {
            const { metadata } = await cp.admin.must<{ metadata: Meta }>('GET', `${p}/${name}`);
            return p === DEPLOYS ? `generation ${metadata.generation}` : metadata.resourceVersion;
          }),
        ),
      );
    const mark = proxy.requests.length;
    const before = await versions();
    const reconciles = await leader.metric('controller_runtime_reconcile_total');
    await eventually(
      'three resyncs of every site',
      async () => (await leader.metric('controller_runtime_reconcile_total')) >= reconciles + 3 * sites.length,
      30_000,
    );
    const writes = proxy.requests
      .slice(mark)
      .filter((r) => r.method !== 'GET' && !r.path.startsWith(`/apis/coordination.k8s.io/`));
    expect(writes.map((r) => `${r.method} ${r.path}`)).to.deep.equal([]);
    expect(await versions()).to.deep.equal(before);
  });

  it('a failing record delete keeps the finalizer, emits a Warning and retries until it succeeds', async () => {
    await cp.admin.must('POST', SITES, newSite('theta', { content: 't' }));
    await converged('theta');
    // A directory where the record file should be: unlink(2) fails with EISDIR, even for root.
    const recordPath = join(recordsDir, `${NS}_theta.json`);
    await rm(recordPath);
    await mkdir(recordPath);
    await writeFile(join(recordPath, 'pin'), 'x');
    await cp.admin.must('DELETE', `${SITES}/theta`);
    await eventually('Warning RecordDeleteFailed', async () => {
      const res = await cp.kubectl([
        'get',
        'events',
        '-n',
        NS,
        '--field-selector',
        'involvedObject.name=theta,type=Warning',
        '-o',
        'jsonpath={.items[*].reason}',
      ]);
      return res.stdout.split(' ').includes('RecordDeleteFailed');
    });
    const blocked = (await getSite('theta')) as Site;
    expect(blocked.metadata.deletionTimestamp).to.be.a('string');
    expect(blocked.metadata.finalizers).to.deep.equal([FINALIZER]);
    await rm(recordPath, { recursive: true });
    await eventually(
      'theta gone once the record can be deleted',
      async () => (await getSite('theta')) === undefined,
      60_000,
    );
  });

  it('the stock controller-runtime dashboards find every series they query, labelled as they group it', async () => {
    const exposed = samples(await leader.metricsText());
    const missing = CONTROLLER_RUNTIME_DASHBOARD.filter(
      (q) => !exposed.some((s) => s.metric === q.metric && q.labels.every((label) => label in s.labels)),
    ).map((q) => `${q.panel}: ${q.expr}`);
    expect(missing).to.deep.equal([]);
    // Work-queue series carry both labels, as controller-runtime's do, and the API requests host and code.
    const depth = exposed.find((s) => s.metric === 'workqueue_depth');
    expect(depth?.labels).to.include({ name: 'staticsite', controller: 'staticsite' });
    const rest = exposed.filter((s) => s.metric === 'rest_client_requests_total');
    expect(
      rest.some((s) => s.labels.method === 'GET' && s.labels.code === '200' && /:\d+$/.test(s.labels.host ?? '')),
    ).to.equal(true);
    expect(rest.some((s) => s.labels.method === 'PUT')).to.equal(true);
    const retries = exposed.find((s) => s.metric === 'workqueue_retries_total');
    expect(retries).to.not.equal(undefined);
  });

  it('deletion while the controller is stopped waits; on restart the record goes, the finalizer goes, the GC removes the children', async () => {
    await cp.admin.must('POST', SITES, newSite('eps', { content: 'e' }));
    await converged('eps');
    expect(await readRecord('eps')).to.not.equal(undefined);
    expect(await leader.stop()).to.equal(0);
    running.delete(leader);
    const released = await cp.admin.must<Lease>('GET', LEASE);
    expect(released.spec.holderIdentity).to.equal('');
    const deleted = await cp.kubectl(['delete', 'staticsites.staticsite.dev', 'eps', '-n', NS, '--wait=false']);
    expect(deleted.code).to.equal(0);
    const waiting = (await getSite('eps')) as Site;
    expect(waiting.metadata.deletionTimestamp).to.be.a('string');
    expect(waiting.metadata.finalizers).to.deep.equal([FINALIZER]);
    expect(await readRecord('eps')).to.not.equal(undefined);
    expect((await cp.admin.get(`${DEPLOYS}/eps`)).status).to.equal(200);

    leader = await startController('replica-a2', kubeconfigs[0] as string);
    await eventually('site gone', async () => (await getSite('eps')) === undefined, 60_000);
    expect(await readRecord('eps')).to.equal(undefined);
    for (const path of [CMS, DEPLOYS, SVCS]) {
      await eventually(
        `GC removes ${path}/eps`,
        async () => (await cp.admin.get(`${path}/eps`)).status === 404,
        60_000,
      );
    }
    const events = await cp.kubectl([
      'get',
      'events',
      '-n',
      NS,
      '--field-selector',
      'involvedObject.name=eps',
      '-o',
      'jsonpath={.items[*].reason}',
    ]);
    expect(events.stdout.split(' ')).to.include('Finalized');
  });

  it('two replicas: only the leader writes; killing it hands over within the lease duration, with no duplicate record', async function () {
    await eventually('replica-a2 leads', async () => (await leader.metric('leader_election_master_status')) === 1);
    const standby = await startController('replica-b', kubeconfigs[1] as string);
    expect(await standby.metric('leader_election_master_status')).to.equal(0);
    const mark = proxy.requests.length;
    await cp.admin.must('POST', SITES, newSite('zeta', { content: 'z' }));
    await converged('zeta');
    const since = proxy.requests.slice(mark);
    const leaderToken = since.find((r) => r.method === 'POST' && r.path === CMS)?.client;
    expect(leaderToken).to.be.a('string');
    const standbyWrites = since.filter((r) => r.client !== leaderToken && r.method !== 'GET');
    expect(standbyWrites.map((r) => `${r.method} ${r.path}`)).to.deep.equal([]);

    const killedAt = Date.now();
    await leader.kill();
    running.delete(leader);
    // Read after the kill: the dead leader's last renewal.
    const lastRenew = Date.parse(((await cp.admin.must<Lease>('GET', LEASE)).spec.renewTime as string) ?? '');
    const taken = await eventually(
      'replica-b holds the lease',
      async () => {
        const l = await cp.admin.must<Lease>('GET', LEASE);
        return l.spec.holderIdentity === 'replica-b' ? l : undefined;
      },
      30_000,
    );
    const acquired = Date.parse(taken.spec.acquireTime as string);
    // The standby waits one lease duration from when it last saw the record change, which it looks at
    // every retry period (client-go's rule: its own clock, never the holder's timestamps). So the
    // takeover lands one lease duration after the last renewal, plus at most one retry period.
    expect(acquired - lastRenew).to.be.at.least(LEASE_SECONDS * 1000);
    expect(acquired - lastRenew).to.be.at.most((LEASE_SECONDS + RETRY_SECONDS) * 1000 + 500);
    expect(acquired - killedAt).to.be.at.most((LEASE_SECONDS + RETRY_SECONDS) * 1000 + 500);
    if (this.test) {
      this.test.title += ` [takeover ${acquired - killedAt} ms after the kill, ${acquired - lastRenew} ms after the last renewal]`;
    }
    expect(await standby.metric('leader_election_master_status')).to.equal(1);

    await cp.admin.must(
      'PATCH',
      `${SITES}/zeta`,
      { spec: { hostname: 'zeta.example.com' } },
      { contentType: 'application/merge-patch+json' },
    );
    await eventually(
      'zeta record follows the new hostname',
      async () => (await readRecord('zeta'))?.hostname === 'zeta.example.com',
    );
    // The claim follows too: the new hostname's claim exists, the old one's is released.
    const claimOf = (host: string) =>
      `/apis/coordination.k8s.io/v1/namespaces/${SYS}/leases/hostname-${sha256(host).slice(0, 40)}`;
    await eventually(
      'zeta holds zeta.example.com only',
      async () =>
        (await cp.admin.get(claimOf('zeta.example.com'))).status === 200 &&
        (await cp.admin.get(claimOf(`zeta.${NS}.sites.staticsite.dev`))).status === 404,
    );
    await converged('zeta');
    const files = (await readdir(recordsDir)).filter((f) => f.endsWith('.json'));
    const hostnames = await Promise.all(
      files.map(async (f) => JSON.parse(await readFile(join(recordsDir, f), 'utf8')).hostname),
    );
    expect(new Set(hostnames).size).to.equal(hostnames.length);
    expect(files.sort()).to.deep.equal([`${NS}_alpha.json`, `${NS}_beta.json`, `${NS}_gamma.json`, `${NS}_zeta.json`]);
  });
});

describe('e2e: the controller limited to one namespace, under the single-namespace overlay’s RBAC only', function () {
  this.timeout(180_000);
  const SITES_NS = 'ctrl-one-ns';
  const OTHER_NS = 'ctrl-one-ns-other';
  const OWN_NS = 'ctrl-one-ns-system';
  const sitesPath = `/apis/staticsite.dev/v1/namespaces/${SITES_NS}/staticsites`;
  const repoRoot = new URL('../../', import.meta.url).pathname;
  let cp: ControlPlane;
  let controller: ControllerProcess | undefined;
  let recordsDir: string;
  let logDir: string;
  interface Doc {
    kind: string;
    metadata: { name: string; namespace?: string };
    subjects?: Array<{ kind: string; name: string; namespace?: string }>;
  }

  before(async () => {
    ({ controlPlane: cp } = await testCluster());
    await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
    for (const ns of [SITES_NS, OTHER_NS, OWN_NS]) await cp.ensureNamespace(ns);
    recordsDir = await mkdtemp(join(tmpdir(), 'ctrl-one-ns-records-'));
    logDir = await mkdtemp(join(tmpdir(), 'ctrl-one-ns-logs-'));
  });

  after(async function () {
    this.timeout(120_000);
    await controller?.stop();
    for (const ns of [SITES_NS, OTHER_NS]) {
      const path = `/apis/staticsite.dev/v1/namespaces/${ns}/staticsites`;
      const left = await cp.admin.get<{ items: Site[] }>(path);
      for (const s of left.body?.items ?? []) {
        await cp.admin.patch(`${path}/${s.metadata.name}`, { metadata: { finalizers: null } });
      }
    }
    for (const ns of [SITES_NS, OTHER_NS, OWN_NS]) await cp.admin.delete(`/api/v1/namespaces/${ns}`);
    await cp.kubectl([
      'delete',
      '--ignore-not-found',
      'clusterrolebinding/staticsite-controller-metrics-auth',
      'clusterrole/staticsite-metrics-auth',
    ]);
    await uninstallCrd(cp.admin, CRD_NAME);
    await rm(recordsDir, { recursive: true, force: true });
    if (!process.env.KEEP_CONTROLLER_LOGS) await rm(logDir, { recursive: true, force: true });
    else process.stderr.write(`controller logs: ${logDir}\n`);
  });

  it('kubectl kustomize manifests/overlays/single-namespace: no ClusterRole for the controller; with only its Roles the controller converges a site in its namespace', async () => {
    const built = await cp.kubectl(['kustomize', `${repoRoot}manifests/overlays/single-namespace`]);
    expect(built.code, built.stderr).to.equal(0);
    const docs = loadAll(built.stdout) as Doc[];
    const rbacKinds = ['ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'];
    const controllerDocs = docs.filter(
      (d) => d.metadata.name.startsWith('staticsite-controller') && rbacKinds.includes(d.kind),
    );
    // The one cluster-wide grant: the reviews its secure metrics server asks for, nothing else.
    const clusterWide = controllerDocs.filter((d) => d.kind.startsWith('Cluster'));
    expect(clusterWide.map((d) => `${d.kind}/${d.metadata.name}`)).to.deep.equal([
      'ClusterRoleBinding/staticsite-controller-metrics-auth',
    ]);
    const metricsAuth = docs.find(
      (d) => d.kind === 'ClusterRole' && d.metadata.name === 'staticsite-metrics-auth',
    ) as Doc & {
      rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
    };
    expect(metricsAuth.rules).to.deep.equal([
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ]);
    controllerDocs.push(metricsAuth);
    // Every grant to the controller's ServiceAccount, as built, moved to this test's namespaces.
    const moved = controllerDocs.map((d) => {
      const text = JSON.stringify(d)
        .replaceAll('"namespace":"staticsite-system"', `"namespace":"${OWN_NS}"`)
        .replaceAll('"namespace":"sites"', `"namespace":"${SITES_NS}"`);
      return JSON.parse(text) as Doc;
    });
    expect(
      moved
        .filter((d) => d.kind === 'Role')
        .map((d) => `${d.metadata.namespace}/${d.metadata.name}`)
        .sort(),
    ).to.deep.equal([
      `${OWN_NS}/staticsite-controller-hostname-claims`,
      `${OWN_NS}/staticsite-controller-leader-election`,
      `${SITES_NS}/staticsite-controller`,
    ]);
    const applied = await cp.kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: moved }),
    );
    expect(applied.code, applied.stderr).to.equal(0);
    const as = `system:serviceaccount:${OWN_NS}:${SA}`;
    const can = async (...args: string[]) => (await cp.kubectl(['auth', 'can-i', ...args, '--as', as])).stdout.trim();
    expect(await can('list', 'staticsites.staticsite.dev', '-n', SITES_NS)).to.equal('yes');
    expect(await can('list', 'staticsites.staticsite.dev', '-n', OTHER_NS)).to.equal('no');
    expect(await can('list', 'staticsites.staticsite.dev', '--all-namespaces')).to.equal('no');

    const creds = await cp.serviceAccountCredentials(OWN_NS, SA);
    const kubeconfig = await cp.writeKubeconfig('ctrl-one-ns.kubeconfig', creds, 'ctrl-one-ns');
    controller = await ControllerProcess.start({
      controlPlane: cp,
      identity: 'one-ns',
      kubeconfig,
      logDir,
      args: [
        '--namespace',
        SITES_NS,
        '--records-dir',
        recordsDir,
        '--leader-elect',
        '--leader-elect-namespace',
        OWN_NS,
      ],
    });
    const c = controller;
    await eventually('controller /readyz', async () => (await c.probe('/readyz')) === 200, 30_000);
    await cp.admin.must('POST', sitesPath, {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name: 'solo', namespace: SITES_NS },
      spec: { content: 'solo' },
    });
    // A site elsewhere is none of its business (and out of its reach).
    await cp.admin.must('POST', `/apis/staticsite.dev/v1/namespaces/${OTHER_NS}/staticsites`, {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name: 'elsewhere', namespace: OTHER_NS },
      spec: { content: 'x' },
    });
    const s = await eventually(
      'solo Ready for its generation',
      async () => {
        const res = await cp.admin.get<Site>(`${sitesPath}/solo`);
        const cond = res.body?.status?.conditions?.find((x) => x.type === 'Ready');
        return cond?.status === 'True' && res.body.status?.observedGeneration === res.body.metadata.generation
          ? res.body
          : undefined;
      },
      90_000,
    );
    expect(s.metadata.finalizers).to.deep.equal([FINALIZER]);
    const record = JSON.parse(await readFile(join(recordsDir, `${SITES_NS}_solo.json`), 'utf8'));
    expect(record.hostname).to.equal(`solo.${SITES_NS}.sites.staticsite.dev`);
    const claim = await cp.admin.must<{ spec: { holderIdentity: string } }>(
      'GET',
      `/apis/coordination.k8s.io/v1/namespaces/${OWN_NS}/leases/hostname-${sha256(record.hostname).slice(0, 40)}`,
    );
    expect(claim.spec.holderIdentity).to.equal(`${SITES_NS}/solo`);
    const elsewhere = await cp.admin.must<Site>(
      'GET',
      `/apis/staticsite.dev/v1/namespaces/${OTHER_NS}/staticsites/elsewhere`,
    );
    expect(elsewhere.metadata.finalizers).to.equal(undefined);
    // Not one request of the controller was refused.
    expect(await c.metric('staticsite_controller_api_requests_total', { code: '403' })).to.equal(0);
    // Deletion finishes under the same permissions.
    const deleted = await cp.kubectl(['delete', 'staticsites.staticsite.dev', 'solo', '-n', SITES_NS, '--timeout=60s']);
    expect(deleted.code, deleted.stderr).to.equal(0);
    expect((await readdir(recordsDir)).filter((f) => f.endsWith('.json'))).to.deep.equal([]);
  });
});
