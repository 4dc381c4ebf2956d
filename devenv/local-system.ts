import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_NAMESPACE } from '../api/index.ts';
import { packageFile } from '../cli/package-root.ts';
import { ControlPlane } from './controlplane.ts';
import { eventually } from './crds.ts';
import { BindServer } from './dns/bind.ts';
import { LOCAL_GATEWAY, LOCAL_GATEWAY_PORT, LocalGateway } from './local-gateway.ts';
import { ManagedProcess, startOrUndo } from './managed-process.ts';
import { NodeSimulator } from './node-simulator.ts';
import { observedStatus } from './observed.ts';
import { builtCli } from './webhook-process.ts';

/** cli/main.ts when run from source, the bundled CLI (dist/bin/staticsite.js) when run from the build. */
function cliMain(): string {
  return extname(import.meta.url) === '.ts' ? fileURLToPath(new URL('../cli/main.ts', import.meta.url)) : builtCli();
}

/** The ports the local overlay and the probes use: the webhook is registered by URL on 8443. */
export const LOCAL_PORTS = { webhook: 8443, webhookMetrics: 8080, controllerMetrics: 8081, certsMetrics: 8082 };

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function httpOk(url: string): Promise<boolean> {
  return (await observedStatus(url)) === 200;
}

/** Where `staticsite local --dns` runs its DNS server (UDP and TCP). */
export const LOCAL_DNS_PORT = 8053;

export interface LocalSystemOptions {
  log?: (line: string) => void;
  /** Keep the external records in a local BIND 9 (RFC 2136 + TSIG) instead of files. */
  dns?: boolean;
  /** Serve each site by its hostname through a Gateway (Traefik on 127.0.0.1:LOCAL_GATEWAY_PORT). */
  gateway?: boolean;
}

/**
 * The whole system on this machine: the control plane (with the node simulator), the local
 * overlay applied, and the cert bootstrapper, webhook and controller as three processes, each
 * acting as its own ServiceAccount.
 */
export class LocalSystem {
  readonly controlPlane: ControlPlane;
  nodes: NodeSimulator | undefined;
  readonly processes = new Map<'certs' | 'webhook' | 'controller', ManagedProcess>();
  certDir = '';
  recordsDir = '';
  private controllerKubeconfig = '';
  private certsKubeconfig = '';
  private readonly log: (line: string) => void;
  /** The DNS server of `--dns`, else undefined (records in files). */
  readonly dns: BindServer | undefined;
  /** The Gateway of `--gateway`, else undefined (sites reachable by no hostname). */
  readonly gateway: LocalGateway | undefined;

  constructor(options: LocalSystemOptions = {}) {
    this.log = options.log ?? (() => {});
    this.dns = options.dns ? new BindServer({ port: LOCAL_DNS_PORT }) : undefined;
    this.gateway = options.gateway ? new LocalGateway() : undefined;
    // Traefik routes to the pods of a Service's EndpointSlices, which this controller writes.
    this.controlPlane = new ControlPlane(options.gateway ? { controllers: ['endpointslice-controller'] } : {});
  }

  async start(): Promise<this> {
    const ports = {
      ...LOCAL_PORTS,
      ...(this.dns && { dns: LOCAL_DNS_PORT }),
      ...(this.gateway && { gateway: LOCAL_GATEWAY_PORT }),
    };
    for (const [name, port] of Object.entries(ports)) {
      if (!(await portFree(port))) {
        throw new Error(`port ${port} (${name}) is in use on 127.0.0.1: stop what listens there and try again`);
      }
    }
    await startOrUndo(
      () => this.startAll(),
      () => this.stop(),
    );
    return this;
  }

  private async startAll(): Promise<void> {
    const started = Date.now();
    this.log('building or reusing the control plane, then starting etcd, kube-apiserver, kube-controller-manager...');
    await this.controlPlane.start();
    this.nodes = new NodeSimulator(this.controlPlane.admin);
    await this.nodes.start();
    this.log(
      `control plane ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${this.controlPlane.apiServerUrl}`,
    );

    const applied = await this.controlPlane.kubectl([
      'apply',
      '--server-side',
      '--field-manager=staticsite-local',
      '-k',
      packageFile('manifests', 'overlays', 'local'),
    ]);
    if (applied.code !== 0) throw new Error(`kubectl apply -k manifests/overlays/local failed: ${applied.stderr}`);
    this.log('applied manifests/overlays/local (CRD, webhook configurations by URL, ServiceAccounts, RBAC)');
    if (this.gateway) {
      await this.gateway.start(this.controlPlane);
      const { namespace, name } = LOCAL_GATEWAY;
      this.log(
        `gateway: Traefik on 127.0.0.1:${this.gateway.port}, Gateway ${namespace}/${name} (log ${this.gateway.logPath})`,
      );
    }

    const dir = this.controlPlane.dir;
    this.certDir = join(dir, 'webhook-certs');
    this.recordsDir = join(dir, 'records');
    await mkdir(this.recordsDir, { recursive: true });
    const kubeconfig = async (name: string) =>
      this.controlPlane.writeKubeconfig(
        `${name}.kubeconfig`,
        await this.controlPlane.serviceAccountCredentials(DEFAULT_NAMESPACE, name, 24 * 3600),
        name,
      );

    this.certsKubeconfig = await kubeconfig('staticsite-certs');
    this.spawn('certs', [...this.certsArgs(), '--watch', `--metrics-port=${LOCAL_PORTS.certsMetrics}`]);
    await this.waitReady('certs', `https://127.0.0.1:${LOCAL_PORTS.certsMetrics}/readyz`, () =>
      existsSync(join(this.certDir, 'tls.crt')),
    );
    this.log(`cert bootstrapper: CA injected, serving cert in ${this.certDir}`);

    this.spawn('webhook', [
      'webhook',
      `--cert-dir=${this.certDir}`,
      `--port=${LOCAL_PORTS.webhook}`,
      `--metrics-port=${LOCAL_PORTS.webhookMetrics}`,
      '--host=127.0.0.1',
      `--kubeconfig=${await kubeconfig('staticsite-webhook')}`,
      // Reached by URL, not through a Service: no endpoint to leave, so nothing to wait for on Ctrl-C.
      '--shutdown-delay=0s',
    ]);
    await this.waitReady('webhook', `https://127.0.0.1:${LOCAL_PORTS.webhookMetrics}/readyz`);
    this.log(`webhook: https://127.0.0.1:${LOCAL_PORTS.webhook} (metrics :${LOCAL_PORTS.webhookMetrics})`);

    if (this.dns) {
      await this.dns.start();
      this.log(`dns: BIND 9 on 127.0.0.1:${this.dns.port}, zone ${this.dns.zone}, TSIG key ${this.dns.keyFile}`);
    }
    this.controllerKubeconfig = await kubeconfig('staticsite-controller');
    await this.startController();
    const records = this.dns ? `in the DNS zone ${this.dns.zone}` : `in ${this.recordsDir}`;
    this.log(`controller: records ${records} (metrics :${LOCAL_PORTS.controllerMetrics})`);
  }

  /** `staticsite certs bootstrap` as the local system runs it, without --watch. */
  certsArgs(): string[] {
    return [
      'certs',
      'bootstrap',
      '--service=staticsite-webhook',
      `--namespace=${DEFAULT_NAMESPACE}`,
      '--san=127.0.0.1',
      '--san=localhost',
      `--out-dir=${this.certDir}`,
      '--webhook-config=mutating/staticsite-webhook',
      '--webhook-config=validating/staticsite-webhook',
      '--crd=staticsites.staticsite.dev',
      `--kubeconfig=${this.certsKubeconfig}`,
    ];
  }

  /** Runs one CLI command to completion (same Node, same CLI) and returns its exit code and output. */
  runCli(args: string[]): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve) => {
      execFile(process.execPath, [cliMain(), ...args], (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr });
      });
    });
  }

  /** Starts (or restarts) the controller process and waits for /readyz. */
  async startController(): Promise<void> {
    this.spawn('controller', [
      'controller',
      `--kubeconfig=${this.controllerKubeconfig}`,
      ...(this.dns
        ? [
            `--records=dns:127.0.0.1:${this.dns.port}`,
            `--dns-zone=${this.dns.zone}`,
            `--dns-tsig-key-file=${this.dns.keyFile}`,
            '--dns-owner-id=local',
          ]
        : [`--records-dir=${this.recordsDir}`]),
      ...(this.gateway ? [`--gateway=${LOCAL_GATEWAY.namespace}/${LOCAL_GATEWAY.name}`] : []),
      `--metrics-port=${LOCAL_PORTS.controllerMetrics}`,
      '--leader-elect',
      `--leader-elect-namespace=${DEFAULT_NAMESPACE}`,
    ]);
    await this.waitReady('controller', `https://127.0.0.1:${LOCAL_PORTS.controllerMetrics}/readyz`);
  }

  /** Stops one of the three processes (SIGTERM, graceful). */
  async stopProcess(name: 'certs' | 'webhook' | 'controller'): Promise<void> {
    // Longer than the controller's own --shutdown-grace (10 s), so it drains and releases its Lease.
    await this.processes.get(name)?.stop(15_000);
    this.processes.delete(name);
  }

  private spawn(name: 'certs' | 'webhook' | 'controller', args: string[]): ManagedProcess {
    const proc = new ManagedProcess(name, {
      command: process.execPath,
      args: [cliMain(), ...args],
      logPath: join(this.controlPlane.dir, `${name}.log`),
    });
    this.processes.set(name, proc);
    return proc;
  }

  private async waitReady(name: 'certs' | 'webhook' | 'controller', url: string, extra: () => boolean = () => true) {
    const proc = this.processes.get(name);
    try {
      await eventually(
        `${name} ready (${url})`,
        async () => (proc?.running ?? false) && extra() && (await httpOk(url)),
        60_000,
        200,
      );
    } catch (error) {
      const state = proc?.running ? 'is running but not ready' : 'exited';
      throw new Error(`${(error as Error).message}: ${name} ${state}. Last lines of its log:\n${await proc?.tail()}`);
    }
  }

  async stop(): Promise<void> {
    for (const name of ['controller', 'webhook', 'certs'] as const) await this.processes.get(name)?.stop();
    await this.gateway?.stop();
    await this.nodes?.stop();
    await this.dns?.dispose();
    await this.controlPlane.stop();
  }
}
