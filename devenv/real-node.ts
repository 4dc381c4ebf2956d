import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { get as httpGet } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dump } from 'js-yaml';
import { packageFile } from '../cli/package-root.ts';
import { DEFAULT_SITE_IMAGE } from '../controller/reconcile/children.ts';
import { type ControlPlane, waitFor } from './controlplane.ts';
import { ManagedProcess, startOrUndo } from './managed-process.ts';
import { freePort } from './ports.ts';

const run = promisify(execFile);

/** The pod network of the node: a bridge with host-local addresses, masqueraded to the host. */
export const POD_CIDR = '10.244.0.0/24';
const BRIDGE = 'ssnode0';
const CNI_NETWORK = 'staticsite-node';
/** The sandbox image containerd runs for every pod (made by `npm run image` from cmd/pause). */
export const PAUSE_IMAGE = 'staticsite-local/pause:3.10';

export interface NodeImage {
  /** A Docker image on this machine. */
  source: string;
  /** The names it gets in the node's containerd, as pods ask for it. */
  names: string[];
}

/** The site image `npm run image` builds, which the node serves under DEFAULT_SITE_IMAGE's name. */
export const LOCAL_SITE_IMAGE = 'staticsite-local/nginx-unprivileged:bookworm';

/**
 * The images `npm run image` builds, as the manifests ask for them: our image, the local
 * unprivileged nginx under the controller's default site image, and the pod sandbox.
 */
export function realNodeImages(): NodeImage[] {
  const { version } = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string };
  const operator = `staticsite-operator:${version}`;
  return [
    { source: operator, names: [operator] },
    { source: LOCAL_SITE_IMAGE, names: [DEFAULT_SITE_IMAGE] },
    { source: PAUSE_IMAGE, names: [PAUSE_IMAGE] },
  ];
}

export interface RealNodeOptions {
  controlPlane: ControlPlane;
  /** Directory with kubelet, kube-proxy and kube-scheduler. Default: build.sh devenv/node's cache. */
  binDir?: string;
  images: NodeImage[];
  name?: string;
  keepDir?: boolean;
}

/** Builds (or finds in the cache) kubelet, kube-proxy, kube-scheduler and pause; returns their directory. */
export async function nodeBinDir(): Promise<string> {
  const { stdout } = await run(
    'bash',
    [packageFile('devenv', 'controlplane', 'build.sh'), packageFile('devenv', 'node')],
    { maxBuffer: 1 << 20, timeout: 60 * 60 * 1000 },
  );
  return stdout.trim().split('\n').at(-1) ?? '';
}

/** The IPv4 address of the interface that holds the default route: what pods can route to. */
export function defaultRouteAddress(): string {
  const routes = readFileSync('/proc/net/route', 'utf8').trim().split('\n').slice(1);
  const iface = routes.map((line) => line.split(/\s+/)).find((cols) => cols[1] === '00000000')?.[0];
  const address = iface ? networkInterfaces()[iface]?.find((a) => a.family === 'IPv4' && !a.internal) : undefined;
  if (!address) throw new Error('no IPv4 address on the default route: a real node needs one pods can reach');
  return address.address;
}

function containerdConfig(dir: string, socket: string): string {
  return `version = 2
root = "${join(dir, 'containerd', 'root')}"
state = "${join(dir, 'containerd', 'state')}"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = "${socket}"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  # This machine refuses a negative oom_score_adj even to root; the kubelet asks -998 for sandboxes.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${join(dir, 'cni', 'net.d')}"
`;
}

function cniConfig(dir: string): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: CNI_NETWORK,
      plugins: [
        {
          type: 'bridge',
          bridge: BRIDGE,
          isGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: POD_CIDR }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: join(dir, 'cni', 'ipam'),
          },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
        { type: 'loopback' },
      ],
    },
    null,
    2,
  );
}

interface KubeletPorts {
  port: number;
  healthz: number;
}

function kubeletConfig(dir: string, socket: string, address: string, ports: KubeletPorts): string {
  return dump({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address,
    port: ports.port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: ports.healthz,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: join(dir, 'ca.crt') },
    },
    authorization: { mode: 'Webhook' },
    containerRuntimeEndpoint: `unix://${socket}`,
    // This host: cgroup v1 with cgroupfs, swap on, no allocatable enforcement, little disk headroom.
    cgroupDriver: 'cgroupfs',
    failCgroupV1: false,
    failSwapOn: false,
    enforceNodeAllocatable: [],
    evictionHard: {
      'memory.available': '1Mi',
      'nodefs.available': '1%',
      'nodefs.inodesFree': '1%',
      'imagefs.available': '1%',
    },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    // Container logs inside the node's folder, not in the host's /var/log/pods.
    podLogsDir: join(dir, 'pod-logs'),
    clusterDomain: 'cluster.local',
    resolvConf: '/etc/resolv.conf',
    serializeImagePulls: false,
    // Pods resync every 10 s (default 1 min): a rotated Secret reaches its volumes sooner.
    syncFrequency: '10s',
    maxPods: 60,
  });
}

/**
 * A real Kubernetes node on this machine, joined to a ControlPlane started with `nodeAddress`:
 * containerd (and runc) with a bridge CNI, the kubelet and kube-proxy as host processes, and
 * kube-scheduler to bind pods to it. Images come from Docker, imported into the node's containerd.
 * Pods are never privileged here: this machine refuses the capabilities privileged pods get.
 */
export class RealNode {
  readonly name: string;
  readonly address: string;
  dir = '';
  private socket = '';
  private binDir = '';
  private readonly processes: ManagedProcess[] = [];
  private readonly options: RealNodeOptions;
  private readonly onExit = () => {
    for (const p of this.processes) p.killNow();
  };

  private constructor(options: RealNodeOptions, address: string) {
    this.options = options;
    this.name = options.name ?? 'staticsite-node';
    this.address = address;
  }

  static async start(options: RealNodeOptions): Promise<RealNode> {
    const cp = options.controlPlane;
    const address = new URL(cp.apiServerUrl).hostname;
    if (address === '127.0.0.1') {
      throw new Error('RealNode: start the ControlPlane with nodeAddress (pods cannot route to 127.0.0.1)');
    }
    const node = new RealNode(options, address);
    process.on('exit', node.onExit);
    await startOrUndo(
      () => node.startProcesses(),
      () => node.stop(),
    );
    return node;
  }

  private async startProcesses(): Promise<void> {
    const cp = this.options.controlPlane;
    // What a node that was killed (not stopped) left: its masquerade rules.
    await removeCniRules();
    this.binDir = this.options.binDir ?? (await nodeBinDir());
    this.dir = await mkdtemp(join(tmpdir(), 'staticsite-node-'));
    this.socket = join(this.dir, 'containerd.sock');
    await mkdir(join(this.dir, 'cni', 'net.d'), { recursive: true });
    await writeFile(join(this.dir, 'containerd.toml'), containerdConfig(this.dir, this.socket));
    await writeFile(join(this.dir, 'cni', 'net.d', '10-staticsite-node.conflist'), cniConfig(this.dir));
    await writeFile(join(this.dir, 'ca.crt'), cp.certificateAuthority.certPem);

    const containerd = this.spawn('containerd', 'containerd', ['--config', join(this.dir, 'containerd.toml')]);
    await waitFor('containerd', 30_000, async () => (await this.ctr(['version'])).code === 0, containerd);
    for (const image of this.options.images) await this.importImage(image);

    const kubeconfig = cp.kubeconfigPath;
    const [kubeletPort, kubeletHealthz, proxyMetrics, proxyHealthz, schedulerPort] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    await writeFile(
      join(this.dir, 'kubelet.yaml'),
      kubeletConfig(this.dir, this.socket, this.address, { port: kubeletPort, healthz: kubeletHealthz }),
    );
    const kubelet = this.spawn('kubelet', join(this.binDir, 'kubelet'), [
      `--config=${join(this.dir, 'kubelet.yaml')}`,
      `--kubeconfig=${kubeconfig}`,
      `--root-dir=${join(this.dir, 'kubelet')}`,
      `--cert-dir=${join(this.dir, 'kubelet-pki')}`,
      `--hostname-override=${this.name}`,
      `--node-ip=${this.address}`,
      '--v=1',
    ]);
    this.spawn('kube-proxy', join(this.binDir, 'kube-proxy'), [
      `--kubeconfig=${kubeconfig}`,
      `--hostname-override=${this.name}`,
      '--proxy-mode=iptables',
      `--cluster-cidr=${POD_CIDR}`,
      // Leave the host's conntrack table size alone.
      '--conntrack-max-per-core=0',
      `--metrics-bind-address=127.0.0.1:${proxyMetrics}`,
      `--healthz-bind-address=127.0.0.1:${proxyHealthz}`,
      '--v=1',
    ]);
    this.spawn('kube-scheduler', join(this.binDir, 'kube-scheduler'), [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${schedulerPort}`,
      '--v=1',
    ]);
    const nodeReady = async () => {
      const res = await cp.admin.get<{ status?: { conditions?: Array<{ type: string; status: string }> } }>(
        `/api/v1/nodes/${this.name}`,
      );
      return res.body.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
    };
    await waitFor('the node Ready', 120_000, nodeReady, kubelet);
  }

  /** `docker save SOURCE | ctr images import` (as `kind load` does), then one tag per name. */
  async importImage(image: NodeImage): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const save = spawn('docker', ['save', image.source], { stdio: ['ignore', 'pipe', 'pipe'] });
      const load = spawn(
        'ctr',
        ['--address', this.socket, '-n', 'k8s.io', 'images', 'import', '--digests', '--snapshotter=overlayfs', '-'],
        { stdio: ['pipe', 'ignore', 'pipe'] },
      );
      save.stdout.pipe(load.stdin);
      let err = '';
      for (const stream of [save.stderr, load.stderr]) {
        stream.on('data', (c: Buffer) => {
          err += c.toString();
        });
      }
      load.on('error', reject);
      load.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`import ${image.source}: ${err}`))));
    });
    // docker save records the tag, so containerd stores the image under its full reference.
    const stored = dockerReference(image.source);
    for (const name of image.names) {
      const target = dockerReference(name);
      if (target === stored) continue;
      const tagged = await this.ctr(['images', 'tag', '--force', stored, target]);
      if (tagged.code !== 0) throw new Error(`ctr images tag ${stored} ${target}: ${tagged.stderr}`);
    }
  }

  private async ctr(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await run('ctr', ['--address', this.socket, '-n', 'k8s.io', ...args]);
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  private spawn(name: string, command: string, args: string[]): ManagedProcess {
    const p = new ManagedProcess(name, { command, args, logPath: join(this.dir, `${name}.log`) });
    this.processes.push(p);
    return p;
  }

  /**
   * The files in every pod's emptyDir volume named `volume` (the controller's `records`), keyed by
   * the pod's UID: what the pods wrote there, read on the node.
   */
  async emptyDirFiles(volume: string): Promise<Array<{ podUid: string; path: string }>> {
    const pods = join(this.dir, 'kubelet', 'pods');
    const found: Array<{ podUid: string; path: string }> = [];
    for (const podUid of await readdir(pods).catch(() => [])) {
      const dir = join(pods, podUid, 'volumes', 'kubernetes.io~empty-dir', volume);
      for (const file of await readdir(dir).catch(() => [])) found.push({ podUid, path: join(dir, file) });
    }
    return found;
  }

  /** The log of one of the node's processes: containerd, kubelet, kube-proxy, kube-scheduler. */
  logPath(name: string): string {
    return join(this.dir, `${name}.log`);
  }

  /**
   * Stops every pod (the scheduler first, so nothing new lands; then the kubelet tears each
   * sandbox down through CNI), then the processes, kube-proxy's rules, the bridge, every mount
   * under the node's folder, and the folder.
   */
  async stop(): Promise<void> {
    const cp = this.options.controlPlane;
    const byName = (name: string) => this.processes.find((p) => p.name === name);
    await byName('kube-scheduler')?.stop();
    if (byName('kubelet')?.running) {
      const pods = await cp.admin.get<{ items?: Array<{ metadata: { name: string; namespace: string } }> }>(
        `/api/v1/pods?fieldSelector=spec.nodeName=${this.name}`,
      );
      for (const pod of pods.body.items ?? []) {
        await cp.admin.delete(`/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`, {
          query: { gracePeriodSeconds: '0' },
        });
      }
      const noTasks = async () => {
        const tasks = await this.ctr(['tasks', 'ls', '-q']);
        return tasks.code === 0 && tasks.stdout.trim() === '';
      };
      await waitFor('every pod sandbox stopped', 60_000, noTasks).catch(() => undefined);
    }
    for (const name of ['kubelet', 'kube-proxy']) await byName(name)?.stop();
    if (this.binDir) {
      await run(join(this.binDir, 'kube-proxy'), ['--cleanup', '--proxy-mode=iptables']).catch(() => undefined);
    }
    await removeKubeletChains();
    await removeCniRules();
    await removeLogLinks(join(this.dir, 'pod-logs'));
    // Whatever the kubelet did not stop: kill the tasks, then containerd.
    if (byName('containerd')?.running) {
      const tasks = await this.ctr(['tasks', 'ls', '-q']);
      for (const id of tasks.stdout.split('\n').filter(Boolean)) {
        await this.ctr(['tasks', 'kill', '--signal', 'SIGKILL', id]);
        await this.ctr(['tasks', 'delete', '--force', id]);
      }
    }
    await byName('containerd')?.stop();
    this.processes.length = 0;
    await run('ip', ['link', 'delete', BRIDGE]).catch(() => undefined);
    if (this.dir) {
      await unmountUnder(this.dir);
      if (!this.options.keepDir) await rm(this.dir, { recursive: true, force: true });
    }
    process.off('exit', this.onExit);
  }
}

/**
 * GET `url` over a new connection, as a first visitor would. Not fetch: its pool would reuse a
 * connection opened before kube-proxy's rules existed, which this machine's outbound proxy answered.
 */
export function getOnce(url: string, timeoutMs = 2_000, host?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    // `host` asks for that name at the URL's address, as `curl --resolve` does.
    const headers = host === undefined ? {} : { host };
    const req = httpGet(url, { agent: false, timeout: timeoutMs, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

/** A name as containerd stores it: `nginx` is `docker.io/library/nginx:latest`. */
export function dockerReference(name: string): string {
  const [first, ...rest] = name.split('/');
  const hasRegistry = rest.length > 0 && first !== undefined && (/[.:]/.test(first) || first === 'localhost');
  let path = hasRegistry ? rest.join('/') : name;
  if (!hasRegistry && !path.includes('/')) path = `library/${path}`;
  const lastPart = path.split('/').at(-1) ?? '';
  if (!lastPart.includes(':') && !lastPart.includes('@')) path = `${path}:latest`;
  return `${hasRegistry ? first : 'docker.io'}/${path}`;
}

/**
 * The bridge plugin's masquerade rules for this network (one chain per pod, removed on CNI DEL;
 * left behind when a node is killed): the POSTROUTING jumps, then the chains.
 */
export async function removeCniRules(): Promise<void> {
  const saved = await run('iptables-save', ['-t', 'nat']).catch(() => ({ stdout: '' }));
  const ours = saved.stdout.split('\n').filter((line) => line.includes(`name: \\"${CNI_NETWORK}\\"`));
  const chains = new Set(ours.flatMap((line) => /-j (CNI-[0-9a-f]+)$/.exec(line)?.[1] ?? []));
  for (const line of ours) {
    const chain = /^-A (CNI-[0-9a-f]+) /.exec(line)?.[1];
    if (chain) chains.add(chain);
  }
  if (chains.size === 0) return;
  const script = [
    '*nat',
    ...ours.filter((line) => line.startsWith('-A POSTROUTING ')).map((line) => line.replace(/^-A /, '-D ')),
    ...[...chains].map((chain) => `-F ${chain}`),
    ...[...chains].map((chain) => `-X ${chain}`),
    'COMMIT',
    '',
  ].join('\n');
  await new Promise<void>((resolve) => {
    const restore = spawn('iptables-restore', ['--noflush'], { stdio: ['pipe', 'ignore', 'ignore'] });
    restore.on('close', () => resolve());
    restore.on('error', () => resolve());
    restore.stdin.end(script);
  });
}

/** The kubelet's own iptables chains (kube-proxy --cleanup leaves them): their jumps, then the chains. */
async function removeKubeletChains(): Promise<void> {
  const chains: Array<[table: string, chain: string]> = [
    ['filter', 'KUBE-FIREWALL'],
    ['filter', 'KUBE-KUBELET-CANARY'],
    ['nat', 'KUBE-KUBELET-CANARY'],
    ['mangle', 'KUBE-KUBELET-CANARY'],
    ['mangle', 'KUBE-IPTABLES-HINT'],
  ];
  for (const tool of ['iptables', 'ip6tables']) {
    for (const hook of ['INPUT', 'OUTPUT']) {
      await run(tool, ['-t', 'filter', '-D', hook, '-j', 'KUBE-FIREWALL']).catch(() => undefined);
    }
    for (const [table, chain] of chains) {
      await run(tool, ['-t', table, '-F', chain]).catch(() => undefined);
      await run(tool, ['-t', table, '-X', chain]).catch(() => undefined);
    }
  }
}

/** The kubelet links every container log into /var/log/containers: remove the links into `logsDir`. */
async function removeLogLinks(logsDir: string): Promise<void> {
  const links = '/var/log/containers';
  for (const name of await readdir(links).catch(() => [] as string[])) {
    const target = await readlink(join(links, name)).catch(() => '');
    if (target.startsWith(`${logsDir}/`)) await rm(join(links, name), { force: true });
  }
}

async function unmountUnder(dir: string): Promise<void> {
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '')
    .filter((target) => target === dir || target.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const target of mounts) await run('umount', ['-l', target]).catch(() => undefined);
}
