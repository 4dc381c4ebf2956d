import type { IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { splitLines } from '../kube/transport.ts';

/** How to reach and authenticate to an API server: client certificate or bearer token. */
export interface KubeCredentials {
  server: string;
  caPem: string;
  certPem?: string;
  keyPem?: string;
  token?: string;
}

export interface KubeResponse<T = unknown> {
  status: number;
  body: T;
  text: string;
  /** The texts of the `Warning: 299` headers, in the order the server sent them. */
  warnings: string[];
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  contentType?: string;
  signal?: AbortSignal;
}

/** Reads every quoted text out of RFC 7234 warning headers (`299 - "text"`, several per header allowed). */
export function parseWarningHeaders(values: string[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    let i = 0;
    while (i < value.length) {
      const open = value.indexOf('"', i);
      if (open < 0) break;
      let text = '';
      let j = open + 1;
      for (; j < value.length && value[j] !== '"'; j++) {
        if (value[j] === '\\' && j + 1 < value.length) j++;
        text += value[j];
      }
      out.push(text);
      i = j + 1;
    }
  }
  return out;
}

function warningHeaders(res: IncomingMessage): string[] {
  const values: string[] = [];
  for (let i = 0; i < res.rawHeaders.length; i += 2) {
    if (res.rawHeaders[i]?.toLowerCase() === 'warning') values.push(res.rawHeaders[i + 1] ?? '');
  }
  return values;
}

function queryString(query: RequestOptions['query']): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

/**
 * A small REST client for tests: raw status codes, bodies and warnings, exactly as the API server
 * sent them, so tests can assert the server's own words.
 */
export class KubeHttp {
  readonly credentials: KubeCredentials;
  private readonly agent: Agent;

  constructor(credentials: KubeCredentials) {
    this.credentials = credentials;
    this.agent = new Agent({
      keepAlive: true,
      ca: credentials.caPem,
      ...(credentials.certPem && { cert: credentials.certPem, key: credentials.keyPem }),
    });
  }

  private open(method: string, path: string, body: unknown, options: RequestOptions): Promise<IncomingMessage> {
    const url = new URL(path + queryString(options.query), this.credentials.server);
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        url,
        {
          method,
          agent: this.agent,
          signal: options.signal,
          headers: {
            accept: 'application/json',
            ...(payload !== undefined && { 'content-type': options.contentType ?? 'application/json' }),
            ...(this.credentials.token && { authorization: `Bearer ${this.credentials.token}` }),
          },
        },
        resolve,
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  async request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<KubeResponse<T>> {
    const res = await this.open(method, path, body, options);
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON (for example /readyz): keep the text
    }
    return { status: res.statusCode ?? 0, body: parsed as T, text, warnings: parseWarningHeaders(warningHeaders(res)) };
  }

  get<T = unknown>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, undefined, options);
  }
  post<T = unknown>(path: string, body: unknown, options?: RequestOptions) {
    return this.request<T>('POST', path, body, options);
  }
  put<T = unknown>(path: string, body: unknown, options?: RequestOptions) {
    return this.request<T>('PUT', path, body, options);
  }
  patch<T = unknown>(path: string, body: unknown, options: RequestOptions = {}) {
    return this.request<T>('PATCH', path, body, {
      contentType: 'application/merge-patch+json',
      ...options,
    });
  }
  delete<T = unknown>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, undefined, options);
  }

  /** Like request, but throws unless the status is 2xx. */
  async must<T = unknown>(method: string, path: string, body?: unknown, options?: RequestOptions): Promise<T> {
    const res = await this.request<T>(method, path, body, options);
    if (res.status < 200 || res.status > 299) {
      throw new Error(`${method} ${path}: HTTP ${res.status}: ${res.text.slice(0, 500)}`);
    }
    return res.body;
  }

  /**
   * Streams watch events (one JSON object per line) to `onEvent` until the server closes the
   * stream or `signal` aborts. Resolves when the stream ends.
   */
  async watch(
    path: string,
    query: RequestOptions['query'],
    onEvent: (event: { type: string; object: Record<string, unknown> }) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const res = await this.open('GET', path, undefined, { query: { ...query, watch: 1 }, signal });
    if (res.statusCode !== 200) {
      res.resume();
      throw new Error(`watch ${path}: HTTP ${res.statusCode}`);
    }
    try {
      for await (const line of splitLines(res)) {
        const event = line.trim();
        if (event) onEvent(JSON.parse(event));
      }
    } catch (error) {
      if (!signal?.aborted) throw error;
    }
  }

  close(): void {
    this.agent.destroy();
  }
}
