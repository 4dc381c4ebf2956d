import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildCrd, CRD_NAME, type StaticSiteV1 } from '../../api/index.ts';
import { SystemClock } from '../../clock/clock.ts';
import { HostnameClaims } from '../../controller/claims/hostname-claims.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { KubeApi } from '../../kube/api-client.ts';
import { loadClusterConfig } from '../../kube/cluster-config.ts';
import type { Lease as KubeLease } from '../../kube/objects.ts';
import { HttpsTransport } from '../../kube/transport.ts';
import { applyControllerRbac, ControllerProcess, removeControllerRbac } from '../support/controller-harness.ts';
import { testCluster } from '../support/shared.ts';

const NS = 'claims-e2e';
const SYS = 'claims-system';
const SA = 'staticsite-controller';
const HOST = 'shop.example.com';
const SITES = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
const CLAIMS = `/apis/coordination.k8s.io/v1/namespaces/${SYS}/leases`;
/** The claim's name, computed here from its definition: hostname- and 40 hex digits of SHA-256. */
const CLAIM = `hostname-${createHash('sha256').update(HOST).digest('hex').slice(0, 40)}`;

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}
interface Site {
  metadata: { name: string; namespace: string; uid: string; finalizers?: string[]; deletionTimestamp?: string };
  spec: { hostname?: string };
  status?: { conditions?: Condition[] };
}
interface Lease {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: { holderIdentity?: string };
}

describe('e2e: hostname claims, on a real control plane, without the webhook', function () {
  this.timeout(180_000);
  let cp: ControlPlane;
  let recordsDir: string;
  let logDir: string;
  let controller: ControllerProcess;
  let kubeconfig: string;
  const names = Array.from({ length: 20 }, (_, i) => `race-${String(i).padStart(2, '0')}`);

  const ready = (s: Site) => s.status?.conditions?.find((c) => c.type === 'Ready');
  const listSites = async () => (await cp.admin.must<{ items: Site[] }>('GET', SITES)).items;
  const records = async () => {
    const files = (await readdir(recordsDir)).filter((f) => f.endsWith('.json'));
    return Promise.all(
      files.map(
        async (f) => JSON.parse(await readFile(join(recordsDir, f), 'utf8')) as { hostname: string; site: string },
      ),
    );
  };
  /** Every site has a Ready condition; exactly one holds the hostname and every other one names it. */
  const oneHolder = (count: number) =>
    eventually(
      `one holder of ${HOST}, ${count - 1} HostnameConflict`,
      async () => {
        const sites = await listSites();
        if (sites.length !== count || sites.some((s) => !ready(s))) return undefined;
        const losers = sites.filter((s) => ready(s)?.reason === 'HostnameConflict');
        const holders = sites.filter((s) => ready(s)?.reason !== 'HostnameConflict');
        if (holders.length !== 1 || losers.length !== count - 1) return undefined;
        const holder = `${NS}/${holders[0]?.metadata.name}`;
        if (losers.some((s) => ready(s)?.message !== `hostname ${HOST} is held by StaticSite ${holder}`))
          return undefined;
        const recs = await records();
        if (recs.length !== 1 || recs[0]?.site !== holder) return undefined;
        return { holder, losers, records: recs };
      },
      90_000,
    );

  before(async () => {
    ({ controlPlane: cp } = await testCluster());
    // Schema-only: no webhook, so nothing checks uniqueness at admission and every create is stored.
    await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
    await cp.ensureNamespace(NS);
    await applyControllerRbac(cp, SYS);
    recordsDir = await mkdtemp(join(tmpdir(), 'claims-records-'));
    logDir = await mkdtemp(join(tmpdir(), 'claims-logs-'));
    const creds = await cp.serviceAccountCredentials(SYS, SA);
    kubeconfig = await cp.writeKubeconfig('claims-controller.kubeconfig', creds, 'claims-controller');
    // All namespaces, the default exclusions (kube-system, staticsite-system); claims beside the Lease.
    controller = await ControllerProcess.start({
      controlPlane: cp,
      identity: 'claims',
      kubeconfig,
      logDir,
      args: [
        '--records-dir',
        recordsDir,
        '--workers',
        '4',
        '--leader-elect',
        '--leader-elect-namespace',
        SYS,
        '--resync-period',
        '5s',
      ],
    });
    await eventually('controller /readyz', async () => (await controller.probe('/readyz')) === 200, 30_000);
  });

  after(async function () {
    this.timeout(120_000);
    await controller?.stop();
    for (const path of [SITES, '/apis/staticsite.dev/v1/namespaces/kube-system/staticsites']) {
      const left = await cp.admin.get<{ items: Site[] }>(path);
      for (const s of left.body?.items ?? []) {
        await cp.admin.patch(`${path}/${s.metadata.name}`, { metadata: { finalizers: null } });
        await cp.admin.delete(`${path}/${s.metadata.name}`);
      }
    }
    await cp?.admin.delete(`/api/v1/namespaces/${NS}`);
    await cp?.admin.delete(`/api/v1/namespaces/${SYS}`);
    await uninstallCrd(cp.admin, CRD_NAME);
    await removeControllerRbac(cp, SYS);
    await rm(recordsDir, { recursive: true, force: true });
    if (!process.env.KEEP_CONTROLLER_LOGS) await rm(logDir, { recursive: true, force: true });
    else process.stderr.write(`controller logs: ${logDir}\n`);
  });

  it('the release is conditional on the real API server: a claim changed since it was read is not deleted (DeleteOptions preconditions)', async () => {
    // The controller's own client stack, as its ServiceAccount.
    const clock = new SystemClock();
    const transport = await HttpsTransport.connect(await loadClusterConfig(kubeconfig, { clock }), { clock });
    try {
      const claims = new HostnameClaims({ api: new KubeApi(transport), namespace: SYS });
      const site = { metadata: { name: 'probe', namespace: NS, uid: 'probe-uid' } } as StaticSiteV1;
      expect(await claims.claim('probe.example.com', site)).to.deep.equal({ outcome: 'claimed' });
      const name = claims.claimFor('probe.example.com', site).metadata.name as string;
      const read = await cp.admin.must<KubeLease>('GET', `${CLAIMS}/${name}`);
      const touched = await cp.admin.patch(`${CLAIMS}/${name}`, { metadata: { labels: { touched: 'yes' } } });
      expect(touched.status).to.equal(200);
      expect(await claims.deleteClaim(read)).to.equal(false);
      expect((await cp.admin.get(`${CLAIMS}/${name}`)).status).to.equal(200);
      // The connection is still sound after a DELETE with a body, and the fresh claim goes.
      const fresh = await cp.admin.must<KubeLease>('GET', `${CLAIMS}/${name}`);
      expect(await claims.release('probe.example.com', site)).to.equal('released');
      expect((await cp.admin.get(`${CLAIMS}/${name}`)).status).to.equal(404);
      expect(fresh.metadata.uid).to.equal(read.metadata.uid);
    } finally {
      transport.close();
    }
  });

  it('20 concurrent creates of one hostname: all stored, exactly one external record, 19 HostnameConflict with a Warning', async () => {
    const created = await Promise.all(
      names.map((name) =>
        cp.admin.post(SITES, {
          apiVersion: 'staticsite.dev/v1',
          kind: 'StaticSite',
          metadata: { name, namespace: NS },
          spec: { content: `<h1>${name}</h1>`, hostname: HOST },
        }),
      ),
    );
    expect(created.map((r) => r.status)).to.deep.equal(names.map(() => 201));
    const { holder, losers, records: recs } = await oneHolder(20);
    expect(recs[0]?.hostname).to.equal(HOST);
    for (const s of losers) {
      expect(ready(s)).to.include({
        status: 'False',
        reason: 'HostnameConflict',
        message: `hostname ${HOST} is held by StaticSite ${holder}`,
      });
    }
    const claim = await cp.admin.must<Lease>('GET', `${CLAIMS}/${CLAIM}`);
    expect(claim.spec.holderIdentity).to.equal(holder);
    expect(claim.metadata.annotations?.['staticsite.dev/claimed-hostname']).to.equal(HOST);
    await eventually('a Warning HostnameConflict for each of the 19', async () => {
      const res = await cp.kubectl([
        'get',
        'events',
        '-n',
        NS,
        '--field-selector',
        'type=Warning,reason=HostnameConflict',
        '-o',
        'jsonpath={.items[*].involvedObject.name}',
      ]);
      const warned = new Set(res.stdout.split(' ').filter(Boolean));
      return losers.every((s) => warned.has(s.metadata.name)) && !warned.has(holder.split('/')[1] ?? '');
    });
  });

  it('the holder deleted: its record, then its claim go, and one of the others takes the hostname', async () => {
    const { holder } = await oneHolder(20);
    const name = holder.split('/')[1] as string;
    const deleted = await cp.kubectl(['delete', 'staticsites.staticsite.dev', name, '-n', NS, '--timeout=60s']);
    expect(deleted.code, deleted.stderr).to.equal(0);
    const next = await oneHolder(19);
    expect(next.holder).to.not.equal(holder);
    const claim = await cp.admin.must<Lease>('GET', `${CLAIMS}/${CLAIM}`);
    expect(claim.spec.holderIdentity).to.equal(next.holder);
  });

  it('kubectl delete of them all finishes: no site stuck Terminating, no record, no claim left', async function () {
    const started = Date.now();
    const deleted = await cp.kubectl(['delete', 'staticsites.staticsite.dev', '--all', '-n', NS, '--timeout=90s']);
    expect(deleted.code, deleted.stderr).to.equal(0);
    expect(await listSites()).to.deep.equal([]);
    if (this.test) this.test.title += ` [${Date.now() - started} ms]`;
    expect(await records()).to.deep.equal([]);
    await eventually('no claim left', async () => (await cp.admin.get(`${CLAIMS}/${CLAIM}`)).status === 404);
  });

  it('a site in an excluded namespace (kube-system) is left alone: no finalizer, no status, no record, one log line', async () => {
    const path = '/apis/staticsite.dev/v1/namespaces/kube-system/staticsites';
    await cp.admin.must('POST', path, {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name: 'system-site', namespace: 'kube-system' },
      spec: { content: 'x', hostname: 'system.example.com' },
    });
    const logFile = join(logDir, 'controller-claims.log');
    const leftAlone = async () =>
      (await readFile(logFile, 'utf8'))
        .split('\n')
        .filter((l) => l.includes('"site":"kube-system/system-site"') && l.includes('left alone'));
    await eventually('the controller logs that it leaves the site alone', async () => (await leftAlone()).length > 0);
    // Two resyncs later: still one line, and the site untouched.
    await new Promise((r) => setTimeout(r, 11_000));
    expect(await leftAlone()).to.have.length(1);
    const s = await cp.admin.must<Site>('GET', `${path}/system-site`);
    expect(s.metadata.finalizers).to.equal(undefined);
    expect(s.status).to.equal(undefined);
    expect(await records()).to.deep.equal([]);
    expect((await cp.admin.get(`/api/v1/namespaces/kube-system/configmaps/system-site`)).status).to.equal(404);
    await cp.admin.must('DELETE', `${path}/system-site`);
  });
});
