import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import type { KubeCredentials } from '../../devenv/kube-http.ts';
import { ManagedProcess } from '../../devenv/managed-process.ts';
import { metricsReaderToken, observe, observedStatus } from '../../devenv/observed.ts';
import { freePort } from '../../devenv/ports.ts';

const repoRoot = new URL('../../', import.meta.url).pathname;

const RBAC_FILES = [
  'manifests/controller/controller-clusterrole.yaml',
  'manifests/controller/controller-rbac.yaml',
  'manifests/metrics-auth/metrics-auth-rbac.yaml',
];

async function rbacText(file: string, namespace: string): Promise<string> {
  const text = await readFile(join(repoRoot, file), 'utf8');
  return text.replaceAll('namespace: staticsite-system', `namespace: ${namespace}`);
}

/**
 * Applies manifests/controller/ (the generated ClusterRole and controller-rbac.yaml) with the real kubectl, its namespace moved to
 * `namespace` (the ServiceAccount and the leader-election Role live there), and the ClusterRoles of
 * manifests/metrics-auth its secure metrics server needs. removeControllerRbac takes the
 * cluster-wide ones away again (the test cluster is shared).
 */
export async function applyControllerRbac(cp: ControlPlane, namespace: string): Promise<void> {
  await cp.ensureNamespace(namespace);
  for (const file of RBAC_FILES) {
    const result = await cp.kubectl(['apply', '-f', '-'], await rbacText(file, namespace));
    if (result.code !== 0) throw new Error(`kubectl apply ${file}: ${result.stderr}`);
  }
}

export async function removeControllerRbac(cp: ControlPlane, namespace: string): Promise<void> {
  for (const file of RBAC_FILES) {
    await cp.kubectl(['delete', '--ignore-not-found', '-f', '-'], await rbacText(file, namespace));
  }
}

/** `staticsite controller` as a child process, with its probes and metrics at hand. */
export class ControllerProcess {
  readonly identity: string;
  readonly metricsPort: number;
  readonly process: ManagedProcess;
  /** A token that may read /metrics (secure metrics, the default). */
  private readonly metricsToken: string;

  private constructor(identity: string, metricsPort: number, proc: ManagedProcess, metricsToken: string) {
    this.identity = identity;
    this.metricsPort = metricsPort;
    this.process = proc;
    this.metricsToken = metricsToken;
  }

  static async start(options: {
    /** Where the scraper's token for /metrics comes from. */
    controlPlane: ControlPlane;
    identity: string;
    kubeconfig: string;
    logDir: string;
    args: string[];
    /** The CLI entry point; default the source (cli/main.ts). Benchmarks pass the built bundle. */
    cli?: string;
  }): Promise<ControllerProcess> {
    const port = await freePort();
    const proc = new ManagedProcess(`controller-${options.identity}`, {
      command: process.execPath,
      args: [
        options.cli ?? join(repoRoot, 'cli/main.ts'),
        'controller',
        '--kubeconfig',
        options.kubeconfig,
        '--metrics-port',
        String(port),
        '--metrics-bind-address',
        '127.0.0.1',
        '--identity',
        options.identity,
        ...options.args,
      ],
      logPath: join(options.logDir, `controller-${options.identity}.log`),
    });
    return new ControllerProcess(options.identity, port, proc, await metricsReaderToken(options.controlPlane));
  }

  probe(path: '/readyz' | '/healthz'): Promise<number> {
    return observedStatus(`https://127.0.0.1:${this.metricsPort}${path}`);
  }

  async metricsText(): Promise<string> {
    const { status, text } = await observe(`https://127.0.0.1:${this.metricsPort}/metrics`, this.metricsToken);
    if (status !== 200) throw new Error(`GET /metrics: HTTP ${status}: ${text.slice(0, 200)}`);
    return text;
  }

  /** The sum of a metric's samples whose labels include all of `labels`. */
  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    let sum = 0;
    for (const line of (await this.metricsText()).split('\n')) {
      if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
      const ok = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
      if (ok) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return sum;
  }

  /** SIGTERM and wait for the exit code. */
  async stop(): Promise<number | null> {
    await this.process.stop(15_000);
    return this.process.exit;
  }

  /** SIGKILL: no shutdown, no lease release. */
  async kill(): Promise<void> {
    this.process.killNow();
    await this.process.exit;
    await this.process.stop();
  }
}

export function credentialsVia(server: string, credentials: KubeCredentials): KubeCredentials {
  return { ...credentials, server };
}
