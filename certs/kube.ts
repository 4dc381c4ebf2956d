import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export interface KubeResponse<T = unknown> {
  status: number;
  body: T;
}

/** The one call the bootstrapper makes to the API server; tests substitute an in-memory fake. */
export interface KubeApi {
  request<T = unknown>(method: string, path: string, body?: unknown, contentType?: string): Promise<KubeResponse<T>>;
}

/** The shape of a Kubernetes `Status` error body. */
export interface KubeStatus {
  kind?: 'Status';
  message?: string;
  reason?: string;
  code?: number;
}

export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';

/**
 * Loads `--kubeconfig F`, or else the default chain ($KUBECONFIG, ~/.kube/config, in-cluster).
 * @kubernetes/client-node is imported here, on first use: loading it takes about 1.7 s, which a
 * directory-only run should not pay.
 */
export async function loadKubeConfig(kubeconfigPath?: string): Promise<KubeConfig> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) {
    throw new Error(
      kubeconfigPath
        ? `kubeconfig ${kubeconfigPath} has no current cluster`
        : 'no Kubernetes configuration found: pass --kubeconfig, set $KUBECONFIG, or run in a pod',
    );
  }
  return kc;
}

/**
 * KubeApi over HTTPS with the credentials of a KubeConfig. Credentials are applied per request so
 * a rotated in-cluster token file is picked up.
 */
export class HttpKubeApi implements KubeApi {
  private readonly kc: KubeConfig;
  private readonly timeoutMs: number;

  constructor(kc: KubeConfig, timeoutMs = 30_000) {
    this.kc = kc;
    this.timeoutMs = timeoutMs;
  }

  async request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<KubeResponse<T>> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const url = new URL(path, cluster.server);
    const options: RequestOptions = { method, headers: { accept: 'application/json' }, timeout: this.timeoutMs };
    await this.kc.applyToHTTPSOptions(options);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) {
      options.headers = { ...options.headers, 'content-type': contentType ?? 'application/json' };
    }
    return new Promise((resolve, reject) => {
      const req = httpsRequest(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // keep the text: the caller reports it
          }
          resolve({ status: res.statusCode ?? 0, body: parsed as T });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${url.href}: no answer within ${this.timeoutMs} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  }
}

/** The server's own message from an error response, or the raw body. */
export function statusMessage(res: KubeResponse): string {
  const body = res.body as KubeStatus | string | undefined;
  if (body && typeof body === 'object' && typeof body.message === 'string') return body.message;
  if (typeof body === 'string' && body) return body.slice(0, 300);
  return `HTTP ${res.status}`;
}
