import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildCrd, CRD_NAME } from '../../api/index.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { BindServer } from '../../devenv/dns/bind.ts';
import { ControllerProcess } from '../support/controller-harness.ts';
import { testCluster } from '../support/shared.ts';

const NS = 'dns-e2e';
const SITES = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
const EVENTS = `/api/v1/namespaces/${NS}/events`;
const SYS = 'dns-e2e-system';

interface Site {
  metadata: { name: string; finalizers?: string[]; deletionTimestamp?: string; resourceVersion?: string };
  spec: { content: string; hostname?: string };
}

/**
 * The controller with `--records dns:…` against Debian's BIND 9: the finalizer's drills with a real
 * authoritative server behind it, checked with dig.
 */
describe('e2e: the controller publishes records in a real DNS server (RFC 2136 + TSIG, BIND 9)', function () {
  this.timeout(120_000);
  let cp: ControlPlane;
  const bind = new BindServer();
  let controller: ControllerProcess | undefined;
  let logDir: string;

  const start = async (identity: string) => {
    controller = await ControllerProcess.start({
      controlPlane: cp,
      identity,
      kubeconfig: cp.kubeconfigPath,
      logDir,
      args: [
        '--namespace',
        NS,
        '--records',
        `dns:127.0.0.1:${bind.port}`,
        '--dns-zone',
        bind.zone,
        '--dns-tsig-key-file',
        bind.keyFile,
        '--dns-owner-id',
        'e2e-cluster',
        '--resync-period',
        '2s',
        '--leader-elect',
        '--leader-elect-namespace',
        SYS,
      ],
    });
    await eventually(`${identity} /readyz`, async () => (await controller?.probe('/readyz')) === 200, 30_000);
    await eventually(
      `${identity} leads`,
      async () => (await controller?.metric('leader_election_master_status')) === 1,
      60_000,
    );
  };
  const create = async (name: string, hostname?: string) => {
    const res = await cp.admin.post<Site>(SITES, {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name },
      spec: { content: `<h1>${name}</h1>`, ...(hostname && { hostname }) },
    });
    expect(res.status, res.text).to.equal(201);
  };
  const answers = (name: string, expected: string[]) =>
    eventually(
      `dig ${name} answers ${JSON.stringify(expected)}`,
      async () => {
        const got = await bind.dig(name, 'CNAME');
        return JSON.stringify(got) === JSON.stringify(expected) ? got : undefined;
      },
      30_000,
      200,
    );
  const eventOf = (name: string, reason: string) =>
    eventually(
      `a ${reason} event for ${name}`,
      async () => {
        const list = await cp.admin.get<{
          items: Array<{ reason: string; type: string; message: string; involvedObject: { name: string } }>;
        }>(EVENTS);
        return list.body.items.find((e) => e.reason === reason && e.involvedObject.name === name);
      },
      60_000,
      250,
    );

  before(async () => {
    ({ controlPlane: cp } = await testCluster());
    await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
    await cp.ensureNamespace(NS);
    await cp.ensureNamespace(SYS);
    await bind.start();
    logDir = await mkdtemp(join(tmpdir(), 'dns-ctrl-logs-'));
    await start('dns-a');
  });

  after(async function () {
    this.timeout(150_000);
    await controller?.stop();
    const left = await cp.admin.get<{ items: Site[] }>(SITES);
    for (const s of left.body?.items ?? [])
      await cp.admin.patch(`${SITES}/${s.metadata.name}`, { metadata: { finalizers: null } });
    await cp.admin.delete(`/api/v1/namespaces/${NS}`);
    await cp.admin.delete(`/api/v1/namespaces/${SYS}`);
    await uninstallCrd(cp.admin, CRD_NAME);
    await bind.dispose();
    await rm(logDir, { recursive: true, force: true });
  });

  it("create: dig answers the site's hostname with its Service", async () => {
    await create('shop');
    await answers(`shop.${NS}.sites.staticsite.dev`, [`shop.${NS}.svc.cluster.local.`]);
    // Each kind of exchange is counted by its result and timed.
    for (const operation of ['soa', 'transfer', 'update']) {
      expect(await controller?.metric('staticsite_dns_requests_total', { operation, result: 'NOERROR' })).to.be.above(
        0,
      );
      expect(await controller?.metric('staticsite_dns_request_duration_seconds_count', { operation })).to.be.above(0);
    }
  });

  it('a hostname change: the new name answers, the old one is gone', async () => {
    // A merge patch: no resourceVersion to race the controller's status writes with.
    const patched = await cp.admin.patch(`${SITES}/shop`, { spec: { hostname: 'shop.sites.staticsite.dev' } });
    expect(patched.status, patched.text).to.equal(200);
    await answers('shop.sites.staticsite.dev', [`shop.${NS}.svc.cluster.local.`]);
    await answers(`shop.${NS}.sites.staticsite.dev`, []);
  });

  it('a leader handover keeps every record: the new leader finds them owned and leaves them be', async () => {
    await controller?.stop(); // releases its Lease on the way out
    await start('dns-b');
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // resyncs at 2 s
    expect(await bind.dig('shop.sites.staticsite.dev', 'CNAME')).to.deep.equal([`shop.${NS}.svc.cluster.local.`]);
  });

  it('a name the controller does not own is never touched: the site gets a RecordFailed event instead', async () => {
    await bind.nsupdate(['taken.sites.staticsite.dev 300 CNAME customer.example.']);
    await create('squatter', 'taken.sites.staticsite.dev');
    const event = await eventOf('squatter', 'RecordFailed');
    expect(event.type).to.equal('Warning');
    expect(event.message).to.include(
      'taken.sites.staticsite.dev already exists in zone sites.staticsite.dev and is not owned by StaticSite dns-e2e/squatter',
    );
    await cp.admin.must('DELETE', `${SITES}/squatter`);
    await eventually('squatter gone', async () => (await cp.admin.get(`${SITES}/squatter`)).status === 404, 30_000);
    expect(await bind.dig('taken.sites.staticsite.dev', 'CNAME')).to.deep.equal(['customer.example.']);
  });

  it('a rotated TSIG key is used without a restart: the key file changes, the next record is written with it', async () => {
    const pid = controller?.process.pid;
    await bind.rotateKey();
    await create('rotated');
    await answers(`rotated.${NS}.sites.staticsite.dev`, [`rotated.${NS}.svc.cluster.local.`]);
    expect(controller?.process.pid).to.equal(pid); // the same process: no restart
    expect(controller?.process.running).to.equal(true);
  });

  it('delete with the DNS server down: the finalizer stays, a Warning, and the record goes once the server is back', async () => {
    await bind.stop();
    await cp.admin.must('DELETE', `${SITES}/shop`);
    const event = await eventOf('shop', 'RecordDeleteFailed');
    expect(event.type).to.equal('Warning');
    expect(
      await controller?.metric('staticsite_dns_requests_total', { operation: 'soa', result: 'error' }),
    ).to.be.above(0);
    const waiting = await cp.admin.must<Site>('GET', `${SITES}/shop`);
    expect(waiting.metadata.deletionTimestamp).to.be.a('string');
    expect(waiting.metadata.finalizers).to.deep.equal(['staticsite.dev/external-record']);
    await bind.start();
    await eventually('shop gone', async () => (await cp.admin.get(`${SITES}/shop`)).status === 404, 90_000, 250);
    expect(await bind.dig('shop.sites.staticsite.dev', 'ANY')).to.deep.equal([]);
    expect(await bind.dig('cname-shop.sites.staticsite.dev', 'TXT')).to.deep.equal([]);
  });
});
