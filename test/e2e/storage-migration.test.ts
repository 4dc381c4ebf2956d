/**
 * Retiring v1alpha1 on a real control plane (docs/storage-migration.md): StaticSites written while
 * v1alpha1 was the storage version are migrated to v1 by `staticsite migrate-storage` (the built CLI
 * as a process, with the conversion webhook killed partway through one run) and by the in-tree
 * StorageVersionMigration controller of kube-controller-manager; then a CRD revision without
 * v1alpha1 is accepted. Where an object is stored, and at which version, is read from etcd itself.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { dump } from 'js-yaml';
import { buildCrd, CRD_NAME, V1ALPHA1_DEPRECATION_WARNING } from '../../api/index.ts';
import type { CustomResourceDefinition } from '../../crd/apiextensions.ts';
import { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd } from '../../devenv/crds.ts';
import { freePort } from '../../devenv/ports.ts';
import { type LoopbackCerts, loopbackCerts } from '../../devenv/webhook-certs.ts';
import { builtCli, WebhookProcess } from '../../devenv/webhook-process.ts';
import { runBuiltCli } from '../support/built-cli.ts';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const SVMS = '/apis/storagemigration.k8s.io/v1/storageversionmigrations';
const ETCD_PREFIX = '/registry/staticsite.dev/staticsites/';
const repoRoot = new URL('../../', import.meta.url).pathname;
const sites = (version: string, ns: string) => `/apis/staticsite.dev/${version}/namespaces/${ns}/staticsites`;

interface Site {
  apiVersion: string;
  metadata: { name: string; namespace: string; resourceVersion: string };
  spec: Record<string, unknown>;
}
interface Crd {
  metadata: { resourceVersion: string };
  spec: CustomResourceDefinition['spec'];
  status: { storedVersions: string[]; conditions?: Array<{ type: string; status: string; reason: string }> };
}
interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  lines: Array<Record<string, unknown>>;
}

/** The shipped CRD with v1alpha1 as the storage version and not deprecated: the revision of older objects. */
function alphaStorageCrd(shipped: CustomResourceDefinition): CustomResourceDefinition {
  const crd = structuredClone(shipped);
  for (const v of crd.spec.versions) {
    v.storage = v.name === 'v1alpha1';
    delete v.deprecated;
    delete v.deprecationWarning;
  }
  return crd;
}

/** The shipped CRD without v1alpha1: the revision of the release that stops serving it. */
function withoutAlpha(shipped: CustomResourceDefinition): CustomResourceDefinition {
  const crd = structuredClone(shipped);
  crd.spec.versions = crd.spec.versions.filter((v) => v.name !== 'v1alpha1');
  return crd;
}

/** `staticsite migrate-storage ARGS` as a process; `onLine` sees each JSON line of stdout as it comes. */
function migrateStorage(args: string[], onLine?: (line: Record<string, unknown>) => void): Promise<CliRun> {
  const child = spawn(process.execPath, [builtCli(), 'migrate-storage', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run: CliRun = { code: 0, stdout: '', stderr: '', lines: [] };
  let pending = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    run.stdout += chunk;
    pending += chunk;
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
      const line = JSON.parse(pending.slice(0, nl)) as Record<string, unknown>;
      pending = pending.slice(nl + 1);
      run.lines.push(line);
      onLine?.(line);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    run.stderr += chunk;
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ ...run, code: code ?? 128 })));
}

describe('e2e: retiring v1alpha1 (storage migration) on the real control plane', function () {
  this.timeout(240_000);
  let cp: ControlPlane;
  let certs: LoopbackCerts;
  let webhook: WebhookProcess | undefined;
  let webhookPort: number;
  let shipped: CustomResourceDefinition;

  /** The apiVersion each StaticSite is stored at in etcd, by `namespace/name`. */
  async function storedAs(ns?: string): Promise<Map<string, string>> {
    const stored = await cp.etcdRange(`${ETCD_PREFIX}${ns ? `${ns}/` : ''}`);
    const out = new Map<string, string>();
    for (const [key, value] of stored) {
      out.set(key.slice(ETCD_PREFIX.length), (JSON.parse(value) as { apiVersion: string }).apiVersion);
    }
    return out;
  }

  const crd = async () => (await cp.admin.must<Crd>('GET', `${CRDS}/${CRD_NAME}`)) as Crd;

  async function startWebhook(): Promise<void> {
    webhook = await WebhookProcess.start({ certDir: certs.dir, port: webhookPort });
  }

  async function createAlphaSites(ns: string, count: number): Promise<void> {
    await cp.ensureNamespace(ns);
    for (let i = 0; i < count; i++) {
      const res = await cp.admin.post(sites('v1alpha1', ns), {
        apiVersion: 'staticsite.dev/v1alpha1',
        kind: 'StaticSite',
        metadata: { name: `site-${i}` },
        spec: { content: `<h1>${ns} ${i}</h1>`, replicas: 1 + (i % 3) },
      });
      expect(res.status, res.text).to.equal(201);
    }
  }

  before(async () => {
    cp = await new ControlPlane({ controllers: ['storage-version-migrator-controller'] }).start();
    certs = await loopbackCerts();
    webhookPort = await freePort();
    await startWebhook();
    shipped = buildCrd({
      conversionClientConfig: { url: `https://127.0.0.1:${webhookPort}/convert`, caBundle: certs.caBundle },
    });
    // The CRD first: kube-controller-manager's garbage collector, whose informers the in-tree
    // migrator reads, discovers new resources every 30 s; started again, it discovers them at once.
    await installCrd(cp.admin, alphaStorageCrd(shipped));
    await cp.restart('kube-controller-manager');
  });

  after(async () => {
    await webhook?.stop();
    await cp?.stop();
    if (certs) await rm(certs.dir, { recursive: true, force: true });
  });

  it('sites created through v1alpha1 under the old revision are stored as v1alpha1', async () => {
    await createAlphaSites('cli', 12);
    const stored = await storedAs('cli');
    expect(stored.size).to.equal(12);
    expect(new Set(stored.values())).to.deep.equal(new Set(['staticsite.dev/v1alpha1']));
    expect((await crd()).status.storedVersions).to.deep.equal(['v1alpha1']);
  });

  it('the shipped CRD makes v1 the storage version and warns of v1alpha1 as `staticsite validate` does', async () => {
    await installCrd(cp.admin, shipped);
    expect((await crd()).status.storedVersions).to.deep.equal(['v1alpha1', 'v1']);
    const res = await cp.admin.get<Site>(`${sites('v1alpha1', 'cli')}/site-0`);
    expect(res.status).to.equal(200);
    expect(res.warnings).to.deep.equal([V1ALPHA1_DEPRECATION_WARNING]);
    const v1 = await cp.admin.get(`${sites('v1', 'cli')}/site-0`);
    expect(v1.warnings).to.deep.equal([]);
    // The validator warns first of the deprecated version, as the server does.
    const dir = await mkdtemp(join(tmpdir(), 'storage-migration-'));
    await writeFile(join(dir, 'crd.yaml'), dump(shipped));
    await writeFile(join(dir, 'site.yaml'), dump({ ...res.body, metadata: { name: 'site-0' } }));
    const validate = await runBuiltCli(['validate', '--crd', join(dir, 'crd.yaml'), join(dir, 'site.yaml')]);
    await rm(dir, { recursive: true, force: true });
    expect(validate.code, validate.stderr).to.equal(0);
    expect(validate.stdout.split('\n').filter((l) => l.startsWith('Warning: '))).to.deep.equal(
      res.warnings.map((w) => `Warning: ${w}`),
    );
  });

  it('a CRD without v1alpha1 is refused while objects may be stored as v1alpha1', async () => {
    const current = await crd();
    const res = await cp.admin.put<{ message: string }>(`${CRDS}/${CRD_NAME}`, {
      ...withoutAlpha(shipped),
      metadata: { ...shipped.metadata, resourceVersion: current.metadata.resourceVersion },
    });
    expect(res.status, res.text).to.equal(422);
    // k8s.io/apiextensions-apiserver pkg/apis/apiextensions/validation ValidateCustomResourceDefinitionStoredVersions
    expect(res.body.message).to.include(
      'status.storedVersions[0]: Invalid value: "v1alpha1": missing from spec.versions; v1alpha1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1alpha1 and removes v1alpha1 from status.storedVersions',
    );
  });

  it('--dry-run reports storedVersions and the objects to write back, and writes nothing', async () => {
    const before = await cp.etcdRange(ETCD_PREFIX);
    const run = await migrateStorage(['--kubeconfig', cp.kubeconfigPath, '--dry-run']);
    expect(run.code, run.stderr).to.equal(0);
    const listed = await cp.admin.must<{ items: Site[] }>('GET', '/apis/staticsite.dev/v1/staticsites');
    const current = await crd();
    expect(run.lines).to.have.length(1);
    expect(run.lines[0]).to.include({ event: 'dry-run', storageVersion: 'v1', objects: listed.items.length });
    expect(run.lines[0]?.storedVersions).to.deep.equal(current.status.storedVersions);
    expect(run.lines[0]?.deprecatedVersions).to.deep.equal(['v1alpha1']);
    expect(await cp.etcdRange(ETCD_PREFIX)).to.deep.equal(before);
  });

  it("the run stops when the conversion webhook goes down partway: exit 1, the server's error, storedVersions untouched", async () => {
    let killed = false;
    const run = await migrateStorage(['--kubeconfig', cp.kubeconfigPath, '--qps', '4', '--page-size', '4'], (line) => {
      if (line.event === 'page' && !killed) {
        killed = true;
        webhook?.process.signal('SIGKILL');
      }
    });
    expect(run.code, run.stdout).to.equal(1);
    const stopped = run.lines.at(-1) ?? {};
    expect(stopped.event).to.equal('stopped');
    const stored = await storedAs('cli');
    const left = [...stored].filter(([, v]) => v === 'staticsite.dev/v1alpha1').map(([key]) => key.split('/')[1]);
    // The API server's own words for an object it cannot convert, read back now.
    const unconverted = await cp.admin.get<{ message: string }>(`${sites('v1', 'cli')}/${left[0]}`);
    expect(unconverted.status).to.equal(500);
    const cause = unconverted.body.message.slice(unconverted.body.message.indexOf('conversion webhook for'));
    expect(cause).to.match(/^conversion webhook for staticsite\.dev\/v1alpha1, Kind=StaticSite failed: /);
    expect(run.stderr).to.include(cause);
    expect(run.stderr).to.include('status.storedVersions left at [v1alpha1, v1]');
    expect((await crd()).status.storedVersions).to.deep.equal(['v1alpha1', 'v1']);
    // What it says it wrote back is what etcd holds at v1: half-way, and every write a whole object.
    expect(stored.size - left.length).to.equal(stopped.rewritten);
    expect(stopped.rewritten).to.be.within(4, 11);
  });

  it('run again with the webhook back (as the ServiceAccount of manifests/storage-migration): every object stored as v1, already migrated ones not written again, storedVersions [v1]', async () => {
    await webhook?.stop();
    await startWebhook();
    await eventually('conversion serves again', async () => (await cp.admin.get(sites('v1', 'cli'))).status === 200);
    const migrated = new Map(
      [...(await storedAs('cli'))].filter(([, v]) => v === 'staticsite.dev/v1').map(([key]) => [key, '']),
    );
    for (const key of migrated.keys()) {
      const [ns, name] = key.split('/');
      migrated.set(
        key,
        (await cp.admin.must<Site>('GET', `${sites('v1', ns ?? '')}/${name}`)).metadata.resourceVersion,
      );
    }
    // This run goes as the ServiceAccount of manifests/storage-migration: its grant is enough.
    const applied = await cp.kubectl(['apply', '-k', `${repoRoot}manifests/storage-migration`]);
    expect(applied.code, applied.stderr).to.equal(0);
    const credentials = await cp.serviceAccountCredentials('staticsite-system', 'staticsite-storage-migrator');
    const kubeconfig = await cp.writeKubeconfig('migrator.kubeconfig', credentials, 'staticsite-storage-migrator');
    const run = await migrateStorage(['--kubeconfig', kubeconfig, '--qps', '0']);
    expect(run.code, run.stderr).to.equal(0);
    const done = run.lines.at(-1) ?? {};
    expect(done).to.include({ event: 'done', listed: 12, rewritten: 12 });
    expect(done.storedVersions).to.deep.equal(['v1']);
    expect((await crd()).status.storedVersions).to.deep.equal(['v1']);
    expect(new Set((await storedAs('cli')).values())).to.deep.equal(new Set(['staticsite.dev/v1']));
    for (const [key, resourceVersion] of migrated) {
      const [ns, name] = key.split('/');
      const site = await cp.admin.must<Site>('GET', `${sites('v1', ns ?? '')}/${name}`);
      expect(site.metadata.resourceVersion, key).to.equal(resourceVersion);
    }
  });

  it('a third run has nothing to do', async () => {
    const run = await migrateStorage(['--kubeconfig', cp.kubeconfigPath]);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.lines).to.have.length(1);
    expect(run.lines[0]).to.include({ event: 'done' });
    expect(run.lines[0]?.storedVersions).to.deep.equal(['v1']);
  });

  it('the in-tree StorageVersionMigration migrates sites stored as v1alpha1 and trims storedVersions itself', async () => {
    await installCrd(cp.admin, alphaStorageCrd(shipped));
    expect((await crd()).status.storedVersions).to.deep.equal(['v1', 'v1alpha1']);
    await createAlphaSites('svm', 6);
    expect(new Set((await storedAs('svm')).values())).to.deep.equal(new Set(['staticsite.dev/v1alpha1']));
    await installCrd(cp.admin, shipped);
    const untouched = await cp.etcdRange(`${ETCD_PREFIX}cli/`);

    const created = await cp.admin.post(SVMS, {
      apiVersion: 'storagemigration.k8s.io/v1',
      kind: 'StorageVersionMigration',
      metadata: { name: 'staticsites-to-v1' },
      spec: { resource: { group: 'staticsite.dev', resource: 'staticsites' } },
    });
    expect(created.status, created.text).to.equal(201);
    type Conditions = { status?: { conditions?: Array<{ type: string; status: string; message: string }> } };
    const conditions = await eventually(
      'the StorageVersionMigration finished',
      async () => {
        const svm = await cp.admin.must<Conditions>('GET', `${SVMS}/staticsites-to-v1`);
        const all = svm.status?.conditions ?? [];
        return all.some((c) => ['Succeeded', 'Failed'].includes(c.type) && c.status === 'True') && all;
      },
      120_000,
      500,
    );
    expect(
      conditions.find((c) => c.status === 'True' && c.type !== 'Running')?.type,
      JSON.stringify(conditions),
    ).to.equal('Succeeded');
    expect(new Set((await storedAs()).values())).to.deep.equal(new Set(['staticsite.dev/v1']));
    // Objects already stored as v1 were patched too, and not written again.
    expect(await cp.etcdRange(`${ETCD_PREFIX}cli/`)).to.deep.equal(untouched);
    const trimmed = await eventually(
      'storedVersions trimmed',
      async () => {
        const now = await crd();
        return now.status.storedVersions.length === 1 && now;
      },
      30_000,
      200,
    );
    expect(trimmed.status.storedVersions).to.deep.equal(['v1']);
    expect(trimmed.status.conditions?.find((c) => c.type === 'StorageMigrating')).to.include({
      status: 'False',
      reason: 'MigrationSucceeded',
    });
  });

  it('then a CRD without v1alpha1 is accepted: every site reads at v1, even with the webhook down, and v1alpha1 is not served', async () => {
    await installCrd(cp.admin, withoutAlpha(shipped));
    await eventually(
      'v1alpha1 no longer served',
      async () => (await cp.admin.get(sites('v1alpha1', 'cli'))).status === 404,
    );
    expect((await cp.admin.get('/apis/staticsite.dev/v1alpha1')).status).to.equal(404);
    // A CRD update re-initializes the resource's storage: 429 until it is done.
    await eventually('v1 served again', async () => (await cp.admin.get(sites('v1', 'cli'))).status === 200);
    await webhook?.stop();
    for (const [ns, count] of [
      ['cli', 12],
      ['svm', 6],
    ] as const) {
      const list = await cp.admin.must<{ items: Site[] }>('GET', sites('v1', ns));
      expect(list.items).to.have.length(count);
      for (let i = 0; i < count; i++) {
        const site = await cp.admin.must<Site>('GET', `${sites('v1', ns)}/site-${i}`);
        expect(site.apiVersion).to.equal('staticsite.dev/v1');
        expect(site.spec).to.include({ content: `<h1>${ns} ${i}</h1>`, replicas: 1 + (i % 3), tier: 'dev' });
      }
    }
  });
});
