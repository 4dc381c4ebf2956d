import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

/** What `/readyz` reports: ready once a pass has succeeded and the latest pass did not fail. */
export class PassStatus {
  private lastOk: Date | undefined;
  private lastError: string | undefined;

  succeeded(at: Date): void {
    this.lastOk = at;
    this.lastError = undefined;
  }

  failed(error: unknown): void {
    this.lastError = error instanceof Error ? error.message : String(error);
  }

  readiness(): { ready: boolean; message: string } {
    if (this.lastError !== undefined) return { ready: false, message: `last pass failed: ${this.lastError}` };
    if (!this.lastOk) return { ready: false, message: 'no pass has completed yet' };
    return { ready: true, message: `ok: certificates stored and CA bundle injected at ${this.lastOk.toISOString()}` };
  }
}

/**
 * The `--watch` HTTP endpoint: `/metrics` (Prometheus), `/healthz` (the process serves: 200), and
 * `/readyz` (200 once the certificates are stored and the bundle injected, 503 with the reason
 * while no pass has succeeded or the latest one failed).
 */
export async function serveStatus(options: {
  registry: Registry;
  status: PassStatus;
  port: number;
  host?: string;
  logger: Pick<Logger, 'info'>;
}): Promise<Server> {
  const { registry, status } = options;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
    } else if (path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (error: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error)),
      );
    } else if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const { ready, message } = status.readiness();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(`${message}\n`);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const address = server.address();
  options.logger.info(
    { event: 'status-listening', port: typeof address === 'object' && address ? address.port : options.port },
    'serving /metrics, /healthz and /readyz',
  );
  return server;
}
