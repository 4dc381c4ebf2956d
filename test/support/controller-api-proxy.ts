import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, createServer, request as httpsRequest, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { issueCertificate, type KeyPair } from '../../certs/x509.ts';
import { isLeasePath, parseApiPath } from './history/api-path.ts';

/** One request that went through the proxy, with the API server's answer. */
export interface ProxiedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  watch: boolean;
  status: number;
  /** Bearer token fingerprint: which client sent it. */
  client: string;
  /** When the proxy received it (Date.now()). */
  at: number;
  /** When the API server answered (Date.now()); undefined if it never did. */
  answeredAt?: number;
  /** For a write: the object's name, from the path (a subresource's object), or for a POST the body's metadata.name. */
  name?: string;
  /** For a Lease write (POST/PUT/PATCH): the body's spec.holderIdentity, '' for a release. */
  holder?: string;
  /** For a Lease write: the Lease's name. */
  leaseName?: string;
  /** For a Lease write: the body's spec.leaseDurationSeconds. */
  leaseDurationSeconds?: number;
}

export interface ProxyRequestInfo {
  method: string;
  path: string;
  query: URLSearchParams;
}

interface WrittenBody {
  metadata?: { name?: unknown };
  spec?: { holderIdentity?: unknown; leaseDurationSeconds?: unknown };
}

function parseBody(chunks: Buffer[]): WrittenBody | undefined {
  try {
    const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof body === 'object' && body !== null ? (body as WrittenBody) : undefined;
  } catch {
    return undefined;
  }
}

/** The written holder: a PUT or POST without one clears it; a merge patch without one leaves it. */
function holderOf(method: string, body: WrittenBody | undefined): string | undefined {
  const holder = body?.spec?.holderIdentity;
  if (typeof holder === 'string') return holder;
  if (method === 'PATCH') return holder === null ? '' : undefined;
  return body ? '' : undefined;
}

/** What a write names: the object, and for a Lease the holder it sets. */
function describeWrite(record: ProxiedRequest, chunks: Buffer[]): void {
  const path = parseApiPath(record.path);
  const lease = isLeasePath(path) && ['POST', 'PUT', 'PATCH'].includes(record.method);
  const body = record.method === 'POST' || lease ? parseBody(chunks) : undefined;
  const bodyName = typeof body?.metadata?.name === 'string' ? body.metadata.name : undefined;
  record.name = record.method === 'POST' ? (bodyName ?? path?.name) : path?.name;
  if (!lease) return;
  record.leaseName = record.name;
  const holder = holderOf(record.method, body);
  if (holder !== undefined) record.holder = holder;
  const duration = body?.spec?.leaseDurationSeconds;
  if (typeof duration === 'number') record.leaseDurationSeconds = duration;
}

/**
 * A TLS pass-through between a controller and the real API server, for end-to-end tests: it counts
 * every request with the server's status code, can hold back watches (an outage), can make the next
 * watch of a path resume from an expired resourceVersion (so the real server answers 410 Gone), and
 * can run a hook before forwarding a request (to interleave a concurrent writer deterministically).
 * Its serving certificate is signed by the control plane's CA, so a kubeconfig pointing at it only
 * changes the server URL.
 */
export class ApiProxy {
  readonly requests: ProxiedRequest[] = [];
  url = '';
  beforeForward: ((req: ProxyRequestInfo) => Promise<void>) | undefined;
  private readonly target: URL;
  private readonly agent: Agent;
  private readonly server: Server;
  private readonly openWatches = new Set<{ path: string; res: ServerResponse; upstream: IncomingMessage }>();
  private refuseWatches: ((path: string) => boolean) | undefined;
  private readonly expireNext = new Set<string>();

  constructor(targetUrl: string, ca: KeyPair) {
    this.target = new URL(targetUrl);
    this.agent = new Agent({ keepAlive: true, ca: ca.certPem, maxSockets: 256 });
    const serving = issueCertificate({
      ca,
      commonName: 'staticsite-test-proxy',
      subjectAltNames: ['127.0.0.1', 'localhost'],
      usage: 'serverAuth',
      notBefore: new Date(Date.now() - 60_000),
      validityDays: 2,
    });
    this.server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      void this.forward(req, res);
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  /** Ends the open watches whose path matches, as a network cut does. */
  cutWatches(match: (path: string) => boolean): number {
    let n = 0;
    for (const w of [...this.openWatches]) {
      if (!match(w.path)) continue;
      w.upstream.destroy();
      w.res.destroy();
      this.openWatches.delete(w);
      n++;
    }
    return n;
  }

  /** While set, watches whose path matches are refused with 503 (an outage of the watch path). */
  holdWatches(match: ((path: string) => boolean) | undefined): void {
    this.refuseWatches = match;
  }

  /** The next watch of `path` asks the server for resourceVersion 1, long compacted: the server answers 410. */
  expireNextWatch(path: string): void {
    this.expireNext.add(path);
  }

  /** Requests that changed something (everything but GET/watch), optionally only from one client. */
  writes(filter: (r: ProxiedRequest) => boolean = () => true): ProxiedRequest[] {
    return this.requests.filter((r) => r.method !== 'GET' && filter(r));
  }

  async stop(): Promise<void> {
    this.cutWatches(() => true);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.agent.destroy();
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://proxy');
    const watch = url.searchParams.get('watch') === '1' || url.searchParams.get('watch') === 'true';
    const token = String(req.headers.authorization ?? '').slice(-12);
    const record: ProxiedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      watch,
      status: 0,
      client: token,
      at: Date.now(),
    };
    this.requests.push(record);
    if (watch && this.refuseWatches?.(url.pathname)) {
      record.status = 503;
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'ServiceUnavailable',
          code: 503,
        }),
      );
      return;
    }
    if (watch && this.expireNext.delete(url.pathname)) url.searchParams.set('resourceVersion', '1');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (record.method !== 'GET') describeWrite(record, chunks);
    try {
      await this.beforeForward?.({ method: record.method, path: url.pathname, query: url.searchParams });
    } catch {
      // a failing hook must not break the proxied request
    }
    const headers: Record<string, string> = {};
    for (const h of ['authorization', 'content-type', 'accept', 'user-agent']) {
      const v = req.headers[h];
      if (typeof v === 'string') headers[h] = v;
    }
    // Always framed: Node sends a DELETE body with neither Content-Length nor chunked encoding, and
    // the API server would then ignore it (its preconditions) and misread the connection's next request.
    const body = Buffer.concat(chunks);
    if (body.length > 0 || !['GET', 'HEAD'].includes(record.method)) headers['content-length'] = String(body.length);
    const upstreamReq = httpsRequest(
      {
        hostname: this.target.hostname,
        port: this.target.port,
        path: url.pathname + url.search,
        method: req.method,
        headers,
        agent: this.agent,
      },
      (upstream) => {
        record.status = upstream.statusCode ?? 0;
        record.answeredAt = Date.now();
        const responseHeaders: Record<string, string | string[]> = {};
        for (const [k, v] of Object.entries(upstream.headers)) if (v !== undefined) responseHeaders[k] = v;
        res.writeHead(upstream.statusCode ?? 502, responseHeaders);
        const entry = { path: url.pathname, res, upstream };
        if (watch) this.openWatches.add(entry);
        upstream.pipe(res);
        const done = () => this.openWatches.delete(entry);
        upstream.on('close', () => {
          done();
          // The server went away mid-answer (killed, restarted): cut the client's side too, as a
          // dead connection would, instead of leaving its watch open and silent.
          if (!upstream.complete) res.destroy();
        });
        res.on('close', () => {
          done();
          upstream.destroy();
        });
      },
    );
    upstreamReq.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.destroy();
    });
    upstreamReq.end(body);
  }
}
