import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import type { KubeHttp } from './kube-http.ts';

interface Pod {
  metadata: { name: string; namespace: string; deletionTimestamp?: string };
  spec: {
    containers: Array<{ ports?: Array<{ containerPort: number }>; volumeMounts?: Array<{ name: string }> }>;
    volumes?: Array<{ name: string; configMap?: { name: string } }>;
  };
  status?: { phase?: string };
}

/** A connection's destination: a pod's IP and one of its container ports. */
interface Target {
  ip: string;
  port: number;
}

/** SOCKS5 (RFC 1928) reply codes. */
const SUCCEEDED = 0x00;
const GENERAL_FAILURE = 0x01;
const CONNECTION_REFUSED = 0x05;
const COMMAND_NOT_SUPPORTED = 0x07;

/**
 * The network of the node simulator's pods, as a SOCKS5 proxy: a connection to POD_IP:PORT reaches
 * what the pod's container would serve there, an HTTP server of the files of the ConfigMap volume the
 * container mounts (`/` is index.html), read from the API on every request so an edit shows at once;
 * an address no running pod listens on is refused. Simulated pod IPs route nowhere on the host and an
 * EndpointSlice refuses loopback addresses, so a host process that connects to pods (Traefik, with
 * `HTTP_PROXY=socks5://...`) goes through this. SOCKS, not an HTTP proxy: Go's HTTP client names the
 * Host header, not the pod's address, in a request to an HTTP proxy.
 */
export class PodNetwork {
  private readonly client: KubeHttp;
  private readonly tcp: Server;
  private readonly http = createHttpServer((req, res) => void this.serve(req, res));
  private readonly targets = new WeakMap<Socket, Target>();
  private readonly sockets = new Set<Socket>();
  private readonly volumes = new Map<string, Record<string, string>>();

  constructor(client: KubeHttp) {
    this.client = client;
    this.tcp = createTcpServer((socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      socket.on('error', () => socket.destroy());
      void this.connect(socket).catch(() => socket.destroy());
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.tcp.once('error', reject);
      this.tcp.listen(0, '127.0.0.1', () => resolve());
    });
    return this;
  }

  /** The proxy's URL, for HTTP_PROXY. */
  get url(): string {
    return `socks5://127.0.0.1:${(this.tcp.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.tcp.close(() => resolve()));
  }

  /** The SOCKS5 handshake, without authentication; then the pod's HTTP server takes the connection. */
  private async connect(socket: Socket): Promise<void> {
    const greeting = await readBytes(socket, 2);
    if (greeting[0] !== 0x05) return void socket.destroy();
    await readBytes(socket, greeting[1] ?? 0);
    socket.write(Buffer.from([0x05, 0x00]));
    const [, command, , addressType] = await readBytes(socket, 4);
    const target = await readTarget(socket, addressType ?? 0);
    const reply = (code: number) => Buffer.from([0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0]);
    if (command !== 0x01 || !target) {
      socket.end(reply(command !== 0x01 ? COMMAND_NOT_SUPPORTED : GENERAL_FAILURE));
      return;
    }
    if (!(await this.listening(target))) {
      socket.end(reply(CONNECTION_REFUSED));
      return;
    }
    this.targets.set(socket, target);
    this.http.emit('connection', socket);
    socket.write(reply(SUCCEEDED));
  }

  private async listening(target: Target): Promise<boolean> {
    const pod = await this.podAt(target.ip);
    return pod?.spec.containers.some((c) => c.ports?.some((p) => p.containerPort === target.port)) ?? false;
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = this.targets.get(req.socket as Socket);
    const pod = target && (await this.podAt(target.ip).catch(() => undefined));
    const container = pod?.spec.containers.find((c) => c.ports?.some((p) => p.containerPort === target?.port));
    // The pod went away: so does its server, and every connection to it.
    if (!pod || !container) return void req.socket.destroy();
    const mounted = new Set(container.volumeMounts?.map((m) => m.name));
    const volume = pod.spec.volumes?.find((v) => v.configMap && mounted.has(v.name));
    const files = volume?.configMap ? await this.configMapData(pod.metadata.namespace, volume.configMap.name) : {};
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://pod').pathname).replace(/^\/+/, '');
    const body = files[path === '' ? 'index.html' : path];
    const [status, type, text] =
      body === undefined ? [404, 'text/plain', '404 Not Found\n'] : [200, contentType(path), body];
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
    res.end(req.method === 'HEAD' ? undefined : text);
  }

  private async podAt(ip: string): Promise<Pod | undefined> {
    const pods = await this.client.must<{ items: Pod[] }>('GET', '/api/v1/pods', undefined, {
      query: { fieldSelector: `status.podIP=${ip}` },
    });
    return pods.items.find((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp);
  }

  /** The ConfigMap's files; once it is gone, the last ones read, as a kubelet keeps a mounted volume's. */
  private async configMapData(namespace: string, name: string): Promise<Record<string, string>> {
    const key = `${namespace}/${name}`;
    const res = await this.client.get<{ data?: Record<string, string> }>(
      `/api/v1/namespaces/${namespace}/configmaps/${name}`,
    );
    if (res.status === 200) this.volumes.set(key, res.body.data ?? {});
    return this.volumes.get(key) ?? {};
  }
}

function contentType(path: string): string {
  return path === '' || path.endsWith('.html') ? 'text/html' : 'text/plain';
}

/** The destination of a SOCKS5 request: an IPv4 address (the simulator's pod IPs) and a port; undefined for other kinds. */
async function readTarget(socket: Socket, addressType: number): Promise<Target | undefined> {
  const length = { 1: 4, 4: 16 }[addressType];
  if (length === undefined) return undefined;
  const address = await readBytes(socket, length);
  const port = (await readBytes(socket, 2)).readUInt16BE(0);
  return addressType === 0x01 ? { ip: [...address].join('.'), port } : undefined;
}

/** Exactly `n` bytes from the socket, in paused mode so nothing past them is consumed. */
function readBytes(socket: Socket, n: number): Promise<Buffer> {
  if (n === 0) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const done = (error?: Error, chunk?: Buffer) => {
      socket.off('readable', tryRead);
      socket.off('end', ended);
      socket.off('close', ended);
      if (chunk) resolve(chunk);
      else reject(error);
    };
    const ended = () => done(new Error('the connection ended during the SOCKS handshake'));
    function tryRead() {
      const chunk = socket.read(n) as Buffer | null;
      if (chunk !== null) done(undefined, chunk);
    }
    socket.on('readable', tryRead);
    socket.once('end', ended);
    socket.once('close', ended);
    tryRead();
  });
}
