import { request } from 'node:https';

export interface NewConnectionReview {
  port: number;
  /** The CA the webhook's serving certificate chains to. */
  caPem: string;
  body: string;
  /** The caller's own loopback address, e.g. 127.0.0.2 for "the API server". */
  localAddress: string;
  /** The caller gives up after this (the API server: its webhook timeout). */
  timeoutMs: number;
  path?: string;
}

/**
 * One review POSTed to the webhook at 127.0.0.1 on a connection of its own, as kube-apiserver does
 * when it holds none: the HTTP status and the milliseconds until the answer's end (handshake
 * included), or the error's code (`TIMEOUT` past `timeoutMs`).
 */
export function reviewOnNewConnection(options: NewConnectionReview): Promise<{ status: number; ms: number } | string> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: options.port,
        path: options.path ?? '/validate',
        method: 'POST',
        localAddress: options.localAddress,
        ca: options.caPem,
        servername: 'localhost',
        agent: false,
        timeout: options.timeoutMs,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(options.body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'TIMEOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    req.end(options.body);
  });
}
