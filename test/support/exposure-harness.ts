import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCrd, CRD_NAME } from '../../api/index.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { applyControllerRbac, ControllerProcess, removeControllerRbac } from './controller-harness.ts';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

export interface ExposedSite {
  metadata: { name: string; uid: string; generation: number };
  status?: { url?: string; observedGeneration?: number; conditions?: Condition[] };
}

/**
 * The built controller run as its ServiceAccount, with the RBAC of manifests/controller plus one
 * overlay's generated grant (`rbacFile`, its ClusterRole and binding named `clusterRole`), on sites in
 * `namespace` and records in files: what the --gateway and --ingress-class tests share.
 */
export class ExposureRun {
  readonly cp: ControlPlane;
  readonly namespace: string;
  readonly sites: string;
  controller: ControllerProcess | undefined;
  recordsDir = '';
  logDir = '';
  private readonly system: string;
  private readonly clusterRole: string;

  constructor(cp: ControlPlane, options: { namespace: string; system: string; clusterRole: string }) {
    this.cp = cp;
    this.namespace = options.namespace;
    this.system = options.system;
    this.clusterRole = options.clusterRole;
    this.sites = `/apis/staticsite.dev/v1/namespaces/${options.namespace}/staticsites`;
  }

  async start(rbacFile: URL, args: string[]): Promise<void> {
    const { cp, namespace, system } = this;
    await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
    await cp.ensureNamespace(namespace);
    await applyControllerRbac(cp, system);
    const rbac = (await readFile(rbacFile, 'utf8')).replaceAll('namespace: staticsite-system', `namespace: ${system}`);
    const applied = await cp.kubectl(['apply', '-f', '-'], rbac);
    if (applied.code !== 0) throw new Error(`kubectl apply ${rbacFile}: ${applied.stderr}`);
    this.recordsDir = await mkdtemp(join(tmpdir(), `${namespace}-records-`));
    this.logDir = await mkdtemp(join(tmpdir(), `${namespace}-logs-`));
    const creds = await cp.serviceAccountCredentials(system, 'staticsite-controller');
    const kubeconfig = await cp.writeKubeconfig(`${namespace}.kubeconfig`, creds, namespace);
    this.controller = await ControllerProcess.start({
      controlPlane: cp,
      identity: namespace,
      kubeconfig,
      logDir: this.logDir,
      args: ['--namespace', namespace, '--claims-namespace', system, '--records-dir', this.recordsDir, ...args],
    });
    const controller = this.controller;
    await eventually('controller /readyz', async () => (await controller.probe('/readyz')) === 200, 30_000);
  }

  async stop(): Promise<void> {
    const { cp } = this;
    await this.controller?.stop();
    const left = await cp.admin.get<{ items: ExposedSite[] }>(this.sites);
    for (const s of left.body?.items ?? []) {
      await cp.admin.patch(`${this.sites}/${s.metadata.name}`, { metadata: { finalizers: null } });
    }
    await cp.admin.delete(`/api/v1/namespaces/${this.namespace}`);
    await uninstallCrd(cp.admin, CRD_NAME);
    await cp.kubectl(['delete', '--ignore-not-found', 'clusterrole,clusterrolebinding', this.clusterRole]);
    await removeControllerRbac(cp, this.system);
    if (this.recordsDir) await rm(this.recordsDir, { recursive: true, force: true });
    if (!process.env.KEEP_CONTROLLER_LOGS) {
      if (this.logDir) await rm(this.logDir, { recursive: true, force: true });
    } else process.stderr.write(`controller logs: ${this.logDir}\n`);
  }

  /** Creates a site of one replica; returns it as created. */
  async createSite(name: string, content: string): Promise<ExposedSite> {
    const created = await this.cp.admin.post<ExposedSite>(this.sites, {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name, namespace: this.namespace },
      spec: { content, replicas: 1 },
    });
    if (created.status !== 201) throw new Error(`creating StaticSite ${name}: ${created.status} ${created.text}`);
    return created.body;
  }

  async getSite(name: string): Promise<ExposedSite> {
    return (await this.cp.admin.get<ExposedSite>(`${this.sites}/${name}`)).body;
  }

  /** The site once its Ready condition has `reason`. */
  readyWith(name: string, reason: string): Promise<ExposedSite> {
    return eventually(`Ready ${reason}`, async () => {
      const s = await this.getSite(name);
      return readyOf(s)?.reason === reason ? s : undefined;
    });
  }

  /** The site once Ready=True for its current generation. */
  converged(name: string): Promise<ExposedSite> {
    return eventually(
      `${name} Ready=True`,
      async () => {
        const s = await this.getSite(name);
        return readyOf(s)?.status === 'True' && s.status?.observedGeneration === s.metadata.generation ? s : undefined;
      },
      90_000,
    );
  }

  /** The site's record file as JSON, or undefined when there is none. */
  async readRecord(name: string): Promise<unknown> {
    const text = await readFile(join(this.recordsDir, `${this.namespace}_${name}.json`), 'utf8').catch(() => undefined);
    return text === undefined ? undefined : JSON.parse(text);
  }
}

export const readyOf = (s: ExposedSite | undefined) => s?.status?.conditions?.find((c) => c.type === 'Ready');

/** The controller ownerReference a child of `site` carries. */
export const ownedBy = (site: ExposedSite) => ({
  apiVersion: 'staticsite.dev/v1',
  kind: 'StaticSite',
  name: site.metadata.name,
  uid: site.metadata.uid,
  controller: true,
  blockOwnerDeletion: true,
});
