import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dump } from 'js-yaml';
import { admissionConfigurationYaml } from '../certs/apiserver-client.ts';
import type { KeyPair } from '../certs/x509.ts';
import { packageFile } from '../cli/package-root.ts';
import { type KubeCredentials, KubeHttp } from './kube-http.ts';
import { ManagedProcess, type ProcessSpec, startOrUndo } from './managed-process.ts';
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
  /**
   * A kubeconfig (YAML) for the API server's calls to admission webhooks: written into the temp dir
   * with an AdmissionConfiguration naming it for both webhook plugins, which kube-apiserver reads
   * from `--admission-control-config-file` (certs/apiserver-client.ts: users by webhook host).
   */
  webhookClientKubeconfig?: string;
  /**
   * An audit Policy (audit.k8s.io/v1, as an object): the API server then logs the events it selects
   * as JSON lines at `auditLogPath`, synchronously (the log backend's blocking mode).
   */
  auditPolicy?: object;
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

/** The processes a ControlPlane runs, which its fault hooks (kill, restart, pause, resume) take. */
export type ControlPlaneComponent = 'etcd' | 'kube-apiserver' | 'kube-controller-manager';

/** How a component was started, so that a restart runs it exactly the same way. */
interface ComponentSpec extends ProcessSpec {
  /** True once the component serves again. */
  healthy: () => Promise<boolean>;
  healthyWithinMs: number;
}

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
  /** The API server's audit log (JSON lines), with ControlPlaneOptions.auditPolicy; else ''. */
  auditLogPath = '';
  private ca!: KeyPair;
  private etcdClientUrl = '';
  private readonly processes: ManagedProcess[] = [];
  private readonly specs = new Map<ControlPlaneComponent, ComponentSpec>();
  private readonly paused = new Set<ManagedProcess>();
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

  /** etcd's client URL (plain HTTP on loopback; also its JSON gRPC gateway under /v3/). */
  get etcdUrl(): string {
    return this.etcdClientUrl;
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
    const admin = await this.writePki(pki);

    const [etcdClient, etcdPeer, apiPort, kcmPort] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const bin = (name: string) => join(this.binDir, name);
    const log = (name: string) => join(this.dir, `${name}.log`);

    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    this.etcdClientUrl = etcdUrl;
    const peerUrl = `http://127.0.0.1:${etcdPeer}`;
    const etcd = this.launch('etcd', {
      command: bin('etcd'),
      args: etcdFlags({ dataDir: join(this.dir, 'etcd'), clientUrl: etcdUrl, peerUrl }),
      logPath: log('etcd'),
      healthy: async () => (await fetch(`${etcdUrl}/health`)).ok,
      healthyWithinMs: 20_000,
    });

    this.apiServerUrl = `https://${nodeAddress ?? '127.0.0.1'}:${apiPort}`;
    this.adminCredentials = { server: this.apiServerUrl, caPem: this.ca.certPem, ...admin };
    this.admin = new KubeHttp(this.adminCredentials);

    await this.waitHealthy('etcd', etcd);
    const admissionConfigFile = await this.writeAdmissionConfig();
    const audit = await this.writeAuditPolicy();

    const apiserver = this.launch('kube-apiserver', {
      command: bin('kube-apiserver'),
      args: apiServerFlags({
        etcdUrl,
        port: apiPort,
        pki,
        certDir: join(this.dir, 'apiserver-certs'),
        nodeAddress,
        admissionConfigFile,
        ...audit,
      }),
      logPath: log('kube-apiserver'),
      healthy: async () => (await this.admin.get('/readyz')).status === 200,
      healthyWithinMs: 60_000,
    });
    await this.waitHealthy('kube-apiserver', apiserver);

    this.kubeconfigPath = join(this.dir, 'admin.kubeconfig');
    await writeFile(this.kubeconfigPath, kubeconfigYaml(this.adminCredentials, 'admin'), { mode: 0o600 });
    await this.startControllerManager(kcmPort);
  }

  /** The audit policy of `auditPolicy`, if any, and where its log goes. */
  private async writeAuditPolicy(): Promise<{ auditPolicyFile: string; auditLogPath: string } | undefined> {
    if (this.options.auditPolicy === undefined) return undefined;
    const auditPolicyFile = join(this.dir, 'audit-policy.yaml');
    await writeFile(auditPolicyFile, dump(this.options.auditPolicy));
    this.auditLogPath = join(this.dir, 'audit.log');
    return { auditPolicyFile, auditLogPath: this.auditLogPath };
  }

  /** The AdmissionConfiguration and webhook kubeconfig of `webhookClientKubeconfig`, if any: its path. */
  private async writeAdmissionConfig(): Promise<string | undefined> {
    const kubeconfig = this.options.webhookClientKubeconfig;
    if (kubeconfig === undefined) return undefined;
    const kubeconfigPath = join(this.dir, 'webhook-client.kubeconfig');
    await writeFile(kubeconfigPath, kubeconfig, { mode: 0o600 });
    const configPath = join(this.dir, 'admission-configuration.yaml');
    await writeFile(configPath, admissionConfigurationYaml(kubeconfigPath), { mode: 0o600 });
    return configPath;
  }

  /**
   * The cluster CA, the serving and client certificates under `pki` (with a client certificate for
   * the API server to call kubelets when there is a node address); returns the admin's key pair.
   */
  private async writePki(pki: string): Promise<KeyPair> {
    const nodeAddress = this.options.nodeAddress;
    const written = await writeControlPlanePki(pki, nodeAddress ? [nodeAddress] : []);
    this.ca = written.ca;
    if (nodeAddress) {
      // How the API server authenticates to kubelets, for `kubectl logs` and `exec` on a real node.
      const client = issueClientCertificate(this.ca, 'kube-apiserver-kubelet-client', ['system:masters']);
      await writeFile(join(pki, 'kubelet-client.crt'), client.certPem, { mode: 0o600 });
      await writeFile(join(pki, 'kubelet-client.key'), client.keyPem, { mode: 0o600 });
    }
    return written.admin;
  }

  /** kube-controller-manager on `port`, once the API server serves and the admin kubeconfig is written. */
  private async startControllerManager(port: number): Promise<void> {
    const controllers = [
      ...DEFAULT_CONTROLLERS,
      ...(this.options.nodeAddress ? REAL_NODE_CONTROLLERS : []),
      ...(this.options.controllers ?? []),
    ];
    const controllerManager = this.launch('kube-controller-manager', {
      command: join(this.binDir, 'kube-controller-manager'),
      args: controllerManagerFlags({
        kubeconfig: this.kubeconfigPath,
        controllers,
        port,
        certDir: join(this.dir, 'kcm-certs'),
        qps: this.options.controllerManagerQps,
      }),
      logPath: join(this.dir, 'kube-controller-manager.log'),
      // Its /healthz lists the controllers once they are built: until then, an API server that does
      // not answer makes it exit (it reads its client CA, then discovery, from the API server).
      healthy: async () => {
        const res = await httpsGet(`https://127.0.0.1:${port}/healthz?verbose`);
        return res.status === 200 && res.text.includes(`[+]${DEFAULT_CONTROLLERS[0]} ok`);
      },
      healthyWithinMs: 30_000,
    });
    await this.waitHealthy('kube-controller-manager', controllerManager);
  }

  private launch(component: ControlPlaneComponent, spec: ComponentSpec): ManagedProcess {
    this.specs.set(component, spec);
    const p = new ManagedProcess(component, spec);
    this.processes.push(p);
    return p;
  }

  private waitHealthy(component: ControlPlaneComponent, proc: ManagedProcess): Promise<void> {
    const spec = this.spec(component);
    return waitFor(component, spec.healthyWithinMs, spec.healthy, proc);
  }

  private spec(component: ControlPlaneComponent): ComponentSpec {
    const spec = this.specs.get(component);
    if (!spec) throw new Error(`${component} was never started`);
    return spec;
  }

  private process(component: ControlPlaneComponent): ManagedProcess {
    const proc = this.processes.find((p) => p.name === component);
    if (!proc) throw new Error(`${component} was never started`);
    return proc;
  }

  /** Process ids of etcd, kube-apiserver and kube-controller-manager while they run. */
  get pids(): number[] {
    return this.processes.flatMap((p) => (p.running && p.pid !== undefined ? [p.pid] : []));
  }

  /** SIGKILLs the component (paused or not) and waits until it has exited. */
  async kill(component: ControlPlaneComponent): Promise<void> {
    const proc = this.process(component);
    this.paused.delete(proc);
    proc.signal('SIGKILL');
    await proc.exit;
    await proc.stop();
  }

  /**
   * Starts the component again with the same binary, flags, ports, data and log file (appended),
   * killing it first if it still runs, and waits until it is healthy.
   */
  async restart(component: ControlPlaneComponent): Promise<void> {
    const old = this.process(component);
    if (old.running) await this.kill(component);
    const spec = this.spec(component);
    const proc = new ManagedProcess(component, spec);
    // Same place in the list: stop() still stops the controller manager first and etcd last.
    this.processes[this.processes.indexOf(old)] = proc;
    await this.waitHealthy(component, proc);
  }

  /**
   * SIGSTOP, and waits until every thread has stopped: the component then keeps its sockets open
   * and answers nothing until resume().
   */
  async pause(component: ControlPlaneComponent): Promise<void> {
    const proc = this.process(component);
    const pid = proc.pid;
    if (pid === undefined || !proc.signal('SIGSTOP')) throw new Error(`${component} is not running`);
    this.paused.add(proc);
    // A thread enters the stop only once it runs: on a busy machine kube-apiserver went on
    // answering for tens of milliseconds after the signal.
    await waitFor(`${component} stopped`, 10_000, () => allThreadsStopped(pid), proc);
  }

  /** SIGCONT after pause(). */
  resume(component: ControlPlaneComponent): void {
    const proc = this.process(component);
    if (!proc.signal('SIGCONT')) throw new Error(`${component} is not running`);
    this.paused.delete(proc);
  }

  /**
   * Compacts etcd at its current revision and waits until the compaction is physical: etcd then
   * refuses every read or watch from an older revision. The revision also goes under
   * `compact_rev_key`, as kube-apiserver's own compactor records it: without that the API server
   * never learns of the compaction and keeps answering exact lists at older resourceVersions from
   * its watch cache. Even so, watches from an older resourceVersion are served from the watch
   * cache while it holds their events: only a restart('kube-apiserver') makes them expire (410).
   */
  async compactEtcd(): Promise<{ revision: number }> {
    const range = await etcdGateway<{ header?: { revision?: string | number } }>(this.etcdUrl, 'kv/range', {
      key: base64(COMPACT_REV_KEY),
    });
    const revision = Number(range.header?.revision);
    if (!Number.isSafeInteger(revision) || revision <= 0) {
      throw new Error(`etcd range: no revision in ${JSON.stringify(range)}`);
    }
    await etcdGateway(this.etcdUrl, 'kv/compaction', { revision, physical: true });
    await etcdGateway(this.etcdUrl, 'kv/put', { key: base64(COMPACT_REV_KEY), value: base64(String(revision)) });
    return { revision };
  }

  /**
   * Every etcd key under `prefix` with its value as kube-apiserver stored it (a custom resource is JSON
   * at the CRD's storage version of its last write), e.g. `/registry/<group>/<plural>/`.
   */
  async etcdRange(prefix: string): Promise<Map<string, string>> {
    const end = Buffer.from(prefix);
    end[end.length - 1] = (end[end.length - 1] ?? 0) + 1;
    const range = await etcdGateway<{ kvs?: Array<{ key: string; value: string }> }>(this.etcdUrl, 'kv/range', {
      key: base64(prefix),
      range_end: end.toString('base64'),
    });
    const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
    return new Map((range.kvs ?? []).map((kv) => [decode(kv.key), decode(kv.value)]));
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
    // A stopped process would only die of stop()'s SIGKILL, after the grace period.
    for (const p of this.paused) p.signal('SIGCONT');
    this.paused.clear();
    // Controller manager first, then the API server, then etcd, so nothing logs errors about a dead peer.
    for (const p of [...this.processes].reverse()) await p.stop();
    this.processes.length = 0;
    process.off('exit', this.onExit);
    if (this.dir && !this.options.keepDir) await rm(this.dir, { recursive: true, force: true });
  }
}

/** kube-apiserver's key (outside its /registry prefix) for the revision its compactor last compacted at. */
const COMPACT_REV_KEY = 'compact_rev_key';

const base64 = (text: string) => Buffer.from(text).toString('base64');

/** A call to etcd's JSON gRPC gateway (`POST /v3/<service>/<method>`, bytes as base64, int64 as strings). */
async function etcdGateway<T = unknown>(etcdUrl: string, method: string, body: unknown): Promise<T> {
  const res = await fetch(`${etcdUrl}/v3/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`etcd ${method}: HTTP ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

/** Whether every thread of a Linux process is stopped (state T in /proc/<pid>/task/<tid>/stat). */
async function allThreadsStopped(pid: number): Promise<boolean> {
  const threads = await readdir(`/proc/${pid}/task`);
  const states = await Promise.all(
    threads.map(async (tid) => {
      // "tid (comm) S ...": comm may hold spaces and parentheses.
      const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '');
      return stat === '' ? 'T' : stat.charAt(stat.lastIndexOf(')') + 2);
    }),
  );
  return states.every((state) => state === 'T');
}

/** GET over HTTPS without verifying the server (kube-controller-manager's self-signed serving cert). */
function httpsGet(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { rejectUnauthorized: false, timeout: 2000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer within 2 s`)));
    req.on('error', reject);
  });
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
  /** `--admission-control-config-file` (ControlPlaneOptions.webhookClientKubeconfig). */
  admissionConfigFile?: string;
  /** `--audit-policy-file` and `--audit-log-path` (ControlPlaneOptions.auditPolicy). */
  auditPolicyFile?: string;
  auditLogPath?: string;
}

/** kube-apiserver flags: envtest's set, with RBAC, service-account tokens and our own serving cert. */
export function apiServerFlags({
  etcdUrl,
  port,
  pki,
  certDir,
  nodeAddress,
  admissionConfigFile,
  auditPolicyFile,
  auditLogPath,
}: ApiServerFlagInput): string[] {
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
    ...(admissionConfigFile ? [`--admission-control-config-file=${admissionConfigFile}`] : []),
    ...(auditPolicyFile && auditLogPath
      ? [`--audit-policy-file=${auditPolicyFile}`, `--audit-log-path=${auditLogPath}`, '--audit-log-format=json']
      : []),
    '--allow-privileged=true',
    '--v=1',
  ];
}

export function kubeconfigYaml(credentials: KubeCredentials, user: string): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return dump({
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
