import { SystemClock } from '../clock/clock.ts';
import { HttpsTransport, type Query } from '../kube/transport.ts';

export { parseWarningHeaders } from '../kube/warnings.ts';

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
  query?: Query;
  contentType?: string;
  signal?: AbortSignal;
}

/**
 * A small REST client for tests: raw status codes, bodies and warnings, exactly as the API server
 * sent them, so tests can assert the server's own words. The HTTPS is kube/'s HttpsTransport (one
 * keep-alive agent per client, no client-side throttle); this class only keeps the test-facing shape.
 */
export class KubeHttp {
  readonly credentials: KubeCredentials;
  private readonly transport: HttpsTransport;

  constructor(credentials: KubeCredentials) {
    this.credentials = credentials;
    this.transport = HttpsTransport.direct(
      {
        server: credentials.server,
        tls: {
          ca: credentials.caPem,
          ...(credentials.certPem && { cert: credentials.certPem, key: credentials.keyPem }),
        },
        headers: credentials.token ? { authorization: `Bearer ${credentials.token}` } : {},
      },
      // As many connections as the tests open: a watch holds one for its whole life.
      { clock: new SystemClock(), maxSockets: Number.POSITIVE_INFINITY },
    );
  }

  /** Any status resolves; a string body is sent as is, anything else as JSON. */
  async request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<KubeResponse<T>> {
    const res = await this.transport.request(method, path, {
      ...(typeof body === 'string' ? { rawBody: body } : { body }),
      query: options.query,
      contentType: options.contentType,
      signal: options.signal,
    });
    // Not JSON (for example /readyz): the body is the text itself.
    const parsed = res.text === '' ? undefined : res.body === undefined ? res.text : res.body;
    return { status: res.status, body: parsed as T, text: res.text, warnings: res.warnings ?? [] };
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
    const res = await this.transport.stream(path, { ...query, watch: 1 }, signal ?? new AbortController().signal);
    if (res.status !== 200 || !res.lines) throw new Error(`watch ${path}: HTTP ${res.status}`);
    try {
      for await (const line of res.lines) {
        const event = line.trim();
        if (event) onEvent(JSON.parse(event));
      }
    } catch (error) {
      if (!signal?.aborted) throw error;
    }
  }

  close(): void {
    this.transport.close();
  }
}
