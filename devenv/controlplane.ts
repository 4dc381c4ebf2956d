import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import type { KeyPair } from '../certs/x509.ts';
import { type KubeCredentials, KubeHttp } from './kube-http.ts';
import { ManagedProcess, startOrUndo } from './managed-process.ts';
import { packageFile } from './package-root.ts';
import { issueClientCertificate, writeControlPlanePki } from './pki.ts';
import { freePort } from './ports.ts';

const run = promisify(execFile);

export interface ControlPlaneOptions {
  /** Directory with etcd, kube-apiserver, kube-controller-manager, kubectl. Default: build.sh's cache. */
  binDir?: string;
  /** Extra kube-controller-manager controllers beyond the defaults. */
  controllers?: string[];
  /** Keep the temp dir after stop (for debugging). */
  keepDir?: boolean;
  /**
   * For a real node (devenv/real-node.ts): the host address pods route to. The API server then
   * serves on it (not loopback), advertises it for the `kubernetes` Service, admits pods with
   * ServiceAccount tokens, and kube-controller-manager runs what real pods need besides.
   */
  nodeAddress?: string;
  /**
   * kube-controller-manager's client QPS (burst twice that). Default: its own, 20: the pace of
   * Deployments and ReplicaSets a benchmark raises so that the controller under test is the limit.
   */
  controllerManagerQps?: number;
}

/** What real pods need from kube-controller-manager beyond DEFAULT_CONTROLLERS. */
export const REAL_NODE_CONTROLLERS = [
  'serviceaccount-controller',
  'root-ca-certificate-publisher-controller',
  'endpointslice-controller',
  'disruption-controller',
  // Lifts the not-ready taint the kubelet registers with, once the node is Ready.
  'node-lifecycle-controller',
];

/** The controllers kube-controller-manager runs: GC and namespaces, plus what makes Deployments roll. */
export const DEFAULT_CONTROLLERS = [
  'garbage-collector-controller',
  'namespace-controller',
  'deployment-controller',
  'replicaset-controller',
];

/** Builds (or finds in the cache) the control-plane binaries; returns their directory. */
export async function controlPlaneBinDir(): Promise<string> {
  if (process.env.STATICSITE_CONTROLPLANE_BIN) return process.env.STATICSITE_CONTROLPLANE_BIN;
  const { stdout } = await run('bash', [packageFile('devenv', 'controlplane', 'build.sh')], {
    maxBuffer: 1 << 20,
    timeout: 60 * 60 * 1000,
  });
  const lines = stdout.trim().split('\n');
  return lines[lines.length - 1] ?? '';
}

/** Polls `check` until true; fails at once, with its log, if `proc` exits meanwhile. */
export async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>, proc?: ManagedProcess) {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (proc && !proc.running) {
      throw new Error(`${what}: ${proc.name} exited. Last lines of its log:\n${await proc.tail()}`);
    }
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: not ready after ${timeoutMs} ms (${String(lastError ?? 'no answer')})`);
}

/**
 * A real etcd + kube-apiserver + kube-controller-manager on loopback ports in a temp dir,
 * with an admin client certificate in system:masters.
 */
export class ControlPlane {
  dir = '';
  binDir = '';
  kubeconfigPath = '';
  admin!: KubeHttp;
  adminCredentials!: KubeCredentials;
  apiServerUrl = '';
  private ca!: KeyPair;
  private readonly processes: ManagedProcess[] = [];
  private readonly options: ControlPlaneOptions;
  private readonly onExit = () => {
    for (const p of this.processes) p.killNow();
  };

  constructor(options: ControlPlaneOptions = {}) {
    this.options = options;
  }

  /** The CA that signs the API server's serving cert and the client certs: tests may issue more. */
  get certificateAuthority(): KeyPair {
    return this.ca;
  }

  async start(): Promise<this> {
    process.on('exit', this.onExit);
    await startOrUndo(
      () => this.startProcesses(),
      () => this.stop(),
    );
    return this;
  }

  private async startProcesses(): Promise<void> {
    this.binDir = this.options.binDir ?? (await controlPlaneBinDir());
    this.dir = await mkdtemp(join(tmpdir(), 'staticsite-cp-'));
    const pki = join(this.dir, 'pki');
    const nodeAddress = this.options.nodeAddress;
    const written = await writeControlPlanePki(pki, nodeAddress ? [nodeAddress] : []);
    this.ca = written.ca;
    const admin = written.admin;
    if (nodeAddress) {
      // How the API server authenticates to kubelets, for `kubectl logs` and `exec` on a real node.
      const client = issueClientCertificate(this.ca, 'kube-apiserver-kubelet-client', ['system:masters']);
      await writeFile(join(pki, 'kubelet-client.crt'), client.certPem, { mode: 0o600 });
      await writeFile(join(pki, 'kubelet-client.key'), client.keyPem, { mode: 0o600 });
    }

    const [etcdClient, etcdPeer, apiPort, kcmPort] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const bin = (name: string) => join(this.binDir, name);
    const log = (name: string) => join(this.dir, `${name}.log`);

    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    const peerUrl = `http://127.0.0.1:${etcdPeer}`;
    const etcd = this.spawn(
      'etcd',
      bin('etcd'),
      etcdFlags({ dataDir: join(this.dir, 'etcd'), clientUrl: etcdUrl, peerUrl }),
      log('etcd'),
    );

    this.apiServerUrl = `https://${nodeAddress ?? '127.0.0.1'}:${apiPort}`;
    this.adminCredentials = { server: this.apiServerUrl, caPem: this.ca.certPem, ...admin };
    this.admin = new KubeHttp(this.adminCredentials);

    await waitFor('etcd', 20_000, async () => (await fetch(`${etcdUrl}/health`)).ok, etcd);

    const apiserver = this.spawn(
      'kube-apiserver',
      bin('kube-apiserver'),
      apiServerFlags({
        etcdUrl,
        port: apiPort,
        pki,
        certDir: join(this.dir, 'apiserver-certs'),
        nodeAddress,
      }),
      log('kube-apiserver'),
    );
    await waitFor('kube-apiserver', 60_000, async () => (await this.admin.get('/readyz')).status === 200, apiserver);

    this.kubeconfigPath = join(this.dir, 'admin.kubeconfig');
    await writeFile(this.kubeconfigPath, kubeconfigYaml(this.adminCredentials, 'admin'), { mode: 0o600 });

    const controllers = [
      ...DEFAULT_CONTROLLERS,
      ...(nodeAddress ? REAL_NODE_CONTROLLERS : []),
      ...(this.options.controllers ?? []),
    ];
    this.spawn(
      'kube-controller-manager',
      bin('kube-controller-manager'),
      controllerManagerFlags({
        kubeconfig: this.kubeconfigPath,
        controllers,
        port: kcmPort,
        certDir: join(this.dir, 'kcm-certs'),
        qps: this.options.controllerManagerQps,
      }),
      log('kube-controller-manager'),
    );
  }

  private spawn(name: string, command: string, args: string[], logPath: string): ManagedProcess {
    const p = new ManagedProcess(name, command, args, logPath);
    this.processes.push(p);
    return p;
  }

  /** Process ids of etcd, kube-apiserver and kube-controller-manager while they run. */
  get pids(): number[] {
    return this.processes.flatMap((p) => (p.pid === undefined ? [] : [p.pid]));
  }

  /** A client certificate signed by the API server's client CA. */
  issueClientCertificate(user: string, groups: string[] = []): { certPem: string; keyPem: string } {
    return issueClientCertificate(this.ca, user, groups);
  }

  /** Creates the ServiceAccount if needed and returns credentials that act exactly as it. */
  async serviceAccountCredentials(namespace: string, name: string, expirationSeconds = 3600): Promise<KubeCredentials> {
    await this.ensureNamespace(namespace);
    const created = await this.admin.post(`/api/v1/namespaces/${namespace}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name },
    });
    if (created.status !== 201 && created.status !== 409) throw new Error(`create ServiceAccount: ${created.text}`);
    const token = await this.admin.must<{ status: { token: string } }>(
      'POST',
      `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds } },
    );
    return { server: this.apiServerUrl, caPem: this.ca.certPem, token: token.status.token };
  }

  async ensureNamespace(name: string): Promise<void> {
    const res = await this.admin.post('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name },
    });
    if (res.status !== 201 && res.status !== 409) throw new Error(`create Namespace ${name}: ${res.text}`);
  }

  /** Writes a kubeconfig for the given credentials into the control plane's dir. */
  async writeKubeconfig(fileName: string, credentials: KubeCredentials, user: string): Promise<string> {
    const path = join(this.dir, fileName);
    await writeFile(path, kubeconfigYaml(credentials, user), { mode: 0o600 });
    return path;
  }

  /** Runs the kubectl built with the control plane against the admin kubeconfig. */
  async kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return runKubectl(join(this.binDir, 'kubectl'), ['--kubeconfig', this.kubeconfigPath, ...args], input);
  }

  async stop(): Promise<void> {
    this.admin?.close();
    // Controller manager first, then the API server, then etcd, so nothing logs errors about a dead peer.
    for (const p of [...this.processes].reverse()) await p.stop();
    this.processes.length = 0;
    process.off('exit', this.onExit);
    if (this.dir && !this.options.keepDir) await rm(this.dir, { recursive: true, force: true });
  }
}

export function runKubectl(
  kubectl: string,
  args: string[],
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(kubectl, args, { maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** etcd flags: one member on loopback, no fsync (test data is disposable). */
export function etcdFlags({ dataDir, clientUrl, peerUrl }: { dataDir: string; clientUrl: string; peerUrl: string }) {
  return [
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${clientUrl}`,
    `--advertise-client-urls=${clientUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=default=${peerUrl}`,
    '--unsafe-no-fsync=true',
    '--log-level=warn',
  ];
}

interface ControllerManagerFlagInput {
  kubeconfig: string;
  controllers: string[];
  port: number;
  certDir: string;
  /** Client QPS (burst: twice); default kube-controller-manager's. */
  qps?: number;
}

/** kube-controller-manager flags: the chosen controllers, no leader election, loopback only. */
export function controllerManagerFlags({ kubeconfig, controllers, port, certDir, qps }: ControllerManagerFlagInput) {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    `--controllers=${controllers.join(',')}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${certDir}`,
    '--concurrent-deployment-syncs=10',
    '--concurrent-replicaset-syncs=10',
    '--concurrent-gc-syncs=20',
    ...(qps === undefined ? [] : [`--kube-api-qps=${qps}`, `--kube-api-burst=${2 * qps}`]),
    '--v=1',
  ];
}

interface ApiServerFlagInput {
  etcdUrl: string;
  port: number;
  pki: string;
  certDir: string;
  /** See ControlPlaneOptions.nodeAddress. */
  nodeAddress?: string;
}

/** kube-apiserver flags: envtest's set, with RBAC, service-account tokens and our own serving cert. */
export function apiServerFlags({ etcdUrl, port, pki, certDir, nodeAddress }: ApiServerFlagInput): string[] {
  const addressing = nodeAddress
    ? [
        `--bind-address=${nodeAddress}`,
        `--advertise-address=${nodeAddress}`,
        '--endpoint-reconciler-type=lease',
        // The node's name does not resolve: reach the kubelet by the IP it registers.
        '--kubelet-preferred-address-types=InternalIP',
        `--kubelet-client-certificate=${join(pki, 'kubelet-client.crt')}`,
        `--kubelet-client-key=${join(pki, 'kubelet-client.key')}`,
      ]
    : [
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        // a loopback advertise address is only allowed without the endpoints reconciler
        '--endpoint-reconciler-type=none',
      ];
  return [
    `--etcd-servers=${etcdUrl}`,
    `--cert-dir=${certDir}`,
    `--tls-cert-file=${join(pki, 'apiserver.crt')}`,
    `--tls-private-key-file=${join(pki, 'apiserver.key')}`,
    `--client-ca-file=${join(pki, 'ca.crt')}`,
    `--secure-port=${port}`,
    ...addressing,
    // A /16: a ClusterIP for each of tens of thousands of sites (a /24 runs out at about 250).
    '--service-cluster-ip-range=10.0.0.0/16',
    '--authorization-mode=RBAC',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${join(pki, 'sa.pub')}`,
    `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
    // Without a node no pod runs, so no pod needs a token; a real node's pods get theirs.
    ...(nodeAddress ? [] : ['--disable-admission-plugins=ServiceAccount']),
    '--allow-privileged=true',
    '--v=1',
  ];
}

export function kubeconfigYaml(credentials: KubeCredentials, user: string): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'staticsite',
        cluster: { server: credentials.server, 'certificate-authority-data': b64(credentials.caPem) },
      },
    ],
    users: [
      {
        name: user,
        user: credentials.token
          ? { token: credentials.token }
          : {
              'client-certificate-data': b64(credentials.certPem ?? ''),
              'client-key-data': b64(credentials.keyPem ?? ''),
            },
      },
    ],
    contexts: [{ name: 'staticsite', context: { cluster: 'staticsite', user } }],
    'current-context': 'staticsite',
  });
}
