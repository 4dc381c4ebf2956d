import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { Clock } from '../clock/clock.ts';
import type { ClusterConfig, TlsOptions } from './cluster.ts';
import type { WriteFence } from './lease-fence.ts';
import { parseWarningHeaders, warningHeaderValues } from './warnings.ts';

export type Query = Record<string, string | number | boolean | undefined>;

export interface TransportRequest {
  query?: Query;
  /** Sent as JSON. */
  body?: unknown;
  /** A body already encoded, sent as is instead of `body` (a test's hand-written or malformed JSON). */
  rawBody?: string;
  contentType?: string;
  signal?: AbortSignal;
  /** Bypass the client-side throttle (leader-election renewals must never wait behind a flood of writes). */
  unthrottled?: boolean;
}

export interface TransportResponse {
  status: number;
  /** Parsed JSON, or undefined when the body was empty or not JSON. */
  body: unknown;
  text: string;
  /**
   * The texts of the response's `Warning` headers (`299 - "text"`), in the order the server sent
   * them; always set by HttpsTransport, optional for fakes.
   */
  warnings?: string[];
}

export interface TransportStream {
  status: number;
  /** The body's lines (a watch stream: one JSON event per line); only when status is 200. */
  lines?: AsyncIterable<string>;
  /** The body of a non-200 answer. */
  body?: unknown;
  text?: string;
}

/** How the controller talks HTTP to the API server; tests substitute an in-memory fake. */
export interface KubeTransport {
  request(method: string, path: string, options?: TransportRequest): Promise<TransportResponse>;
  stream(path: string, query: Query, signal: AbortSignal): Promise<TransportStream>;
  close(): void;
}

/** Client-side request throttle (client-go's QPS/burst token bucket). */
export interface RequestThrottle {
  acquire(signal?: AbortSignal): Promise<void>;
}

/** Called once per finished request: the hook behind the request metrics. */
export type ResponseObserver = (info: {
  method: string;
  path: string;
  code: number;
  seconds: number;
  host: string;
}) => void;

export interface HttpsTransportOptions {
  clock: Clock;
  throttle?: RequestThrottle;
  observe?: ResponseObserver;
  maxSockets?: number;
  /**
   * A request (never a watch) whose connection stays silent this long fails with `no answer within`.
   * Default: no limit.
   */
  requestTimeoutMs?: number;
  /**
   * Asked right before every request but a GET leaves the process (after the throttle's wait, so a
   * write held back by it is judged when it goes, not when it was queued): a refused write is not
   * sent and fails with FencedError. Set for a replica that writes under a lease; the elector's own
   * Lease requests go through a transport of their own, without one.
   */
  fence?: WriteFence;
}

/** An API server reached without a kubeconfig: its URL, TLS material and fixed authentication headers. */
export interface DirectConnection {
  /** `https://host:port` (or `http://` for a plain local server). */
  server: string;
  /** The CA to trust and, for client-certificate authentication, the certificate and key (PEM). */
  tls?: TlsOptions;
  /** Sent with every request, unchanged: `{ authorization: 'Bearer <token>' }` for a token. */
  headers?: Record<string, string>;
}

/** The authentication headers for the next request. */
type AuthHeaders = () => Promise<Record<string, string>>;

export function queryString(query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

/**
 * HTTP(S) to the API server of a ClusterConfig (in-cluster service account or kubeconfig, see
 * cluster-config.ts) or of a DirectConnection (URL, PEMs, fixed headers), with
 * keep-alive connections and raw JSON in and out: no typed models, so a read-modify-write never
 * drops a field this client does not know.
 */
export class HttpsTransport implements KubeTransport {
  private readonly server: URL;
  private readonly agent: HttpsAgent | HttpAgent;
  private readonly authHeaders: AuthHeaders;
  private readonly options: HttpsTransportOptions;

  private constructor(server: string, tls: TlsOptions, authHeaders: AuthHeaders, options: HttpsTransportOptions) {
    this.authHeaders = authHeaders;
    this.options = options;
    this.server = new URL(server);
    const maxSockets = options.maxSockets ?? 64;
    this.agent =
      this.server.protocol === 'http:'
        ? new HttpAgent({ keepAlive: true, maxSockets })
        : new HttpsAgent({
            keepAlive: true,
            maxSockets,
            ca: tls.ca,
            cert: tls.cert,
            key: tls.key,
            pfx: tls.pfx,
            passphrase: tls.passphrase,
            servername: tls.servername,
            ...(tls.rejectUnauthorized !== undefined && { rejectUnauthorized: tls.rejectUnauthorized }),
          });
  }

  /** To the cluster of a ClusterConfig; fails unless its first authentication headers can be had. */
  static async connect(config: ClusterConfig, options: HttpsTransportOptions): Promise<HttpsTransport> {
    const transport = new HttpsTransport(config.server, config.tls, () => config.authHeaders(), options);
    await transport.authHeaders();
    return transport;
  }

  /** To a server given by URL and PEMs, with fixed headers: needs no kubeconfig, nor client-node. */
  static direct(connection: DirectConnection, options: HttpsTransportOptions): HttpsTransport {
    const headers = { ...connection.headers };
    return new HttpsTransport(connection.server, connection.tls ?? {}, async () => headers, options);
  }

  private async open(
    method: string,
    path: string,
    options: TransportRequest,
    timeoutMs?: number,
  ): Promise<IncomingMessage> {
    if (!options.unthrottled) await this.options.throttle?.acquire(options.signal);
    const url = new URL(path + queryString(options.query), this.server);
    const payload = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...(await this.authHeaders()),
      // Node sends a DELETE body with neither Content-Length nor chunked encoding, so the API server
      // would never read it (a delete's preconditions were ignored): always say how long the body is.
      ...(payload !== undefined && {
        'content-type': options.contentType ?? 'application/json',
        'content-length': String(Buffer.byteLength(payload)),
      }),
    };
    const fence = method === 'GET' ? undefined : this.options.fence;
    const what = `${method} ${url.pathname}`;
    fence?.assertMayWrite(what);
    const send = this.server.protocol === 'http:' ? httpRequest : httpsRequest;
    return new Promise((resolve, reject) => {
      const timeout = timeoutMs === undefined ? {} : { timeout: timeoutMs };
      const req = send(url, { method, agent: this.agent, headers, signal: options.signal, ...timeout }, resolve);
      if (timeoutMs !== undefined) {
        req.on('timeout', () => req.destroy(new Error(`${method} ${url.href}: no answer within ${timeoutMs} ms`)));
      }
      req.on('error', reject);
      if (!fence) {
        req.end(payload);
        return;
      }
      // Asked again once the connection can take the bytes (a new one after its TLS handshake), and
      // the request written in the same synchronous step: the window a stalled process can slip
      // through shrinks to those few instructions (docs/controller.md, "Fencing").
      req.once('socket', (socket) =>
        whenWritable(socket, () => {
          try {
            fence.assertMayWrite(what);
          } catch (error) {
            req.destroy(error as Error);
            return;
          }
          req.end(payload);
        }),
      );
    });
  }

  async request(method: string, path: string, options: TransportRequest = {}): Promise<TransportResponse> {
    const started = this.options.clock.now();
    let code = 0;
    try {
      const res = await this.open(method, path, options, this.options.requestTimeoutMs);
      code = res.statusCode ?? 0;
      res.on('error', () => {});
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      return {
        status: code,
        body: parseJson(text),
        text,
        warnings: parseWarningHeaders(warningHeaderValues(res.rawHeaders)),
      };
    } finally {
      this.options.observe?.({
        method,
        path,
        code,
        seconds: (this.options.clock.now() - started) / 1000,
        host: this.server.host,
      });
    }
  }

  async stream(path: string, query: Query, signal: AbortSignal): Promise<TransportStream> {
    const started = this.options.clock.now();
    let code = 0;
    try {
      const res = await this.open('GET', path, { query, signal });
      res.on('error', () => {});
      code = res.statusCode ?? 0;
      if (code !== 200) {
        const chunks: Buffer[] = [];
        for await (const chunk of res) chunks.push(chunk as Buffer);
        const text = Buffer.concat(chunks).toString('utf8');
        return { status: code, body: parseJson(text), text };
      }
      return { status: code, lines: splitLines(res) };
    } finally {
      this.options.observe?.({
        method: 'WATCH',
        path,
        code,
        seconds: (this.options.clock.now() - started) / 1000,
        host: this.server.host,
      });
    }
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Runs `write` once `socket` is connected and, for TLS, past its handshake. */
function whenWritable(socket: Socket, write: () => void): void {
  if (socket instanceof TLSSocket) {
    const protocol = socket.getProtocol();
    if (protocol && protocol !== 'unknown') write();
    else socket.once('secureConnect', write);
  } else if (socket.connecting) {
    socket.once('connect', write);
  } else {
    write();
  }
}

/**
 * The lines of a streaming response. Errors of the socket (a cut connection) end the iteration by
 * throwing into the consumer; an error listener is always attached, so none can go unhandled.
 */
export async function* splitLines(res: IncomingMessage): AsyncGenerator<string> {
  res.on('error', () => {});
  let buffer = '';
  try {
    for await (const chunk of res) {
      buffer += (chunk as Buffer).toString('utf8');
      let nl = buffer.indexOf('\n');
      while (nl >= 0) {
        yield buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        nl = buffer.indexOf('\n');
      }
    }
    if (buffer) yield buffer;
  } finally {
    res.destroy();
  }
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
