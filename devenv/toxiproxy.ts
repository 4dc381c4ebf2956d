/**
 * A real network fault proxy for the tests: Shopify's toxiproxy, built from its Go module
 * (devenv/toxiproxy, by devenv/controlplane/build.sh) and run as a host process on loopback. Each
 * proxy is a TCP listener in front of an upstream `host:port`; toxics (latency, timeouts, resets,
 * bandwidth and data limits) act on the traffic through it, and disabling a proxy partitions it.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { packageFile } from '../cli/package-root.ts';
import { waitFor } from './controlplane.ts';
import { ManagedProcess, startOrUndo } from './managed-process.ts';
import { freePort } from './ports.ts';

const run = promisify(execFile);

/** Builds (or finds in the cache) toxiproxy-server; returns its directory. STATICSITE_TOXIPROXY_BIN overrides. */
export async function toxiproxyBinDir(): Promise<string> {
  if (process.env.STATICSITE_TOXIPROXY_BIN) return process.env.STATICSITE_TOXIPROXY_BIN;
  const { stdout } = await run(
    'bash',
    [packageFile('devenv', 'controlplane', 'build.sh'), packageFile('devenv', 'toxiproxy')],
    {
      maxBuffer: 1 << 20,
      timeout: 30 * 60 * 1000,
    },
  );
  return stdout.trim().split('\n').at(-1) ?? '';
}

/** Each toxic's attributes (times in milliseconds), as toxiproxy v2.5.0's toxics/ package reads them. */
export interface ToxicAttributes {
  /** Delays each chunk of data by `latency` ± `jitter`. */
  latency: { latency: number; jitter?: number };
  /** Lets no data through; closes the connection after `timeout`, or never when it is 0. */
  timeout: { timeout: number };
  /** Limits the stream to `rate` KB/s. */
  bandwidth: { rate: number };
  /** Resets the connection (TCP RST) `timeout` after the first data on the stream; 0: at once. */
  reset_peer: { timeout: number };
  /** Holds the close of the connection back by `delay`. */
  slow_close: { delay: number };
  /** Closes the connection once `bytes` have gone through. */
  limit_data: { bytes: number };
}

export type ToxicType = keyof ToxicAttributes;
/** `upstream`: client to upstream; `downstream`: upstream to client. */
export type ToxicStream = 'upstream' | 'downstream';

export type ToxicSpec = {
  [T in ToxicType]: {
    type: T;
    /** Default: downstream. */
    stream?: ToxicStream;
    /** The share of connections it acts on, 0 to 1. Default: 1. */
    toxicity?: number;
    /** Default: `<type>_<stream>`; a proxy's toxics have distinct names. */
    name?: string;
    attributes: ToxicAttributes[T];
  };
}[ToxicType];

export interface Toxic {
  name: string;
  type: ToxicType;
  stream: ToxicStream;
  toxicity: number;
  attributes: Record<string, number>;
}

export interface ToxiproxyProxy {
  name: string;
  /** Where clients connect: `host:port`, the port the one bound when `0` was asked. */
  listen: string;
  upstream: string;
  enabled: boolean;
  toxics: Toxic[];
}

/** A request the toxiproxy API refused: its HTTP status and body. */
export class ToxiproxyApiError extends Error {
  readonly status: number;
  readonly body: string;

  constructor(method: string, path: string, status: number, body: string) {
    super(`toxiproxy ${method} ${path}: ${status} ${body.trim()}`);
    this.name = 'ToxiproxyApiError';
    this.status = status;
    this.body = body;
  }
}

export interface ToxiproxyOptions {
  /** Directory with toxiproxy-server. Default: toxiproxyBinDir(). */
  binDir?: string;
  /** Keep the log directory after stop (for debugging). */
  keepDir?: boolean;
}

type ProxyRef = string | { name: string };

const nameOf = (proxy: ProxyRef) => encodeURIComponent(typeof proxy === 'string' ? proxy : proxy.name);

// The API's proxy JSON also carries an empty "Logger" object (a field of the Go struct).
function proxyOf(json: unknown): ToxiproxyProxy {
  const { name, listen, upstream, enabled, toxics } = json as ToxiproxyProxy;
  return { name, listen, upstream, enabled, toxics };
}

/** toxiproxy-server on a free loopback port, driven through its HTTP API. */
export class Toxiproxy {
  /** The API's base URL, `http://127.0.0.1:<port>`. */
  apiUrl = '';
  private dir = '';
  private process: ManagedProcess | undefined;
  private readonly options: ToxiproxyOptions;
  private readonly onExit = () => this.process?.killNow();

  private constructor(options: ToxiproxyOptions) {
    this.options = options;
  }

  static async start(options: ToxiproxyOptions = {}): Promise<Toxiproxy> {
    const toxiproxy = new Toxiproxy(options);
    await startOrUndo(
      () => toxiproxy.launch(),
      () => toxiproxy.stop(),
    );
    return toxiproxy;
  }

  private async launch(): Promise<void> {
    process.on('exit', this.onExit);
    const binDir = this.options.binDir ?? (await toxiproxyBinDir());
    this.dir = await mkdtemp(join(tmpdir(), 'staticsite-toxiproxy-'));
    const port = await freePort();
    this.apiUrl = `http://127.0.0.1:${port}`;
    this.process = new ManagedProcess('toxiproxy-server', {
      command: join(binDir, 'toxiproxy-server'),
      args: ['-host', '127.0.0.1', '-port', String(port)],
      logPath: join(this.dir, 'toxiproxy.log'),
    });
    await waitFor('toxiproxy /version', 15_000, async () => (await fetch(`${this.apiUrl}/version`)).ok, this.process);
  }

  /** A proxy from `listen` (default: a port toxiproxy picks on 127.0.0.1) to `upstream`, enabled. */
  async createProxy(name: string, upstream: string, listen = '127.0.0.1:0'): Promise<ToxiproxyProxy> {
    return proxyOf(await this.request('POST', '/proxies', { name, upstream, listen, enabled: true }));
  }

  async getProxy(proxy: ProxyRef): Promise<ToxiproxyProxy> {
    return proxyOf(await this.request('GET', `/proxies/${nameOf(proxy)}`));
  }

  async deleteProxy(proxy: ProxyRef): Promise<void> {
    await this.request('DELETE', `/proxies/${nameOf(proxy)}`);
  }

  /**
   * Disabled, the proxy closes its connections and its listener (new ones are refused): a partition.
   * Enabled again, it listens on the same address.
   */
  async setEnabled(proxy: ProxyRef, enabled: boolean): Promise<ToxiproxyProxy> {
    return proxyOf(await this.request('POST', `/proxies/${nameOf(proxy)}`, { enabled }));
  }

  /** Acts on the proxy's open connections as well as on new ones. */
  async addToxic(proxy: ProxyRef, toxic: ToxicSpec): Promise<Toxic> {
    return (await this.request('POST', `/proxies/${nameOf(proxy)}/toxics`, toxic)) as Toxic;
  }

  async updateToxic(
    proxy: ProxyRef,
    toxicName: string,
    change: { toxicity?: number; attributes?: Record<string, number> },
  ): Promise<Toxic> {
    const path = `/proxies/${nameOf(proxy)}/toxics/${encodeURIComponent(toxicName)}`;
    return (await this.request('POST', path, change)) as Toxic;
  }

  async removeToxic(proxy: ProxyRef, toxicName: string): Promise<void> {
    await this.request('DELETE', `/proxies/${nameOf(proxy)}/toxics/${encodeURIComponent(toxicName)}`);
  }

  /** Every proxy enabled, every toxic removed. */
  async reset(): Promise<void> {
    await this.request('POST', '/reset');
  }

  async stop(): Promise<void> {
    await this.process?.stop();
    this.process = undefined;
    process.off('exit', this.onExit);
    if (this.dir && !this.options.keepDir) await rm(this.dir, { recursive: true, force: true });
  }

  /** The last lines of the server's log (each API request and proxied connection is logged). */
  async tail(lines = 40): Promise<string> {
    return (await this.process?.tail(lines)) ?? '';
  }

  private async request(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${this.apiUrl}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    if (!response.ok) throw new ToxiproxyApiError(method, path, response.status, text);
    return text ? JSON.parse(text) : undefined;
  }
}
