import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface Check {
  ok: boolean;
  /** One line per failing or passing check, like the API server's /readyz?verbose. */
  lines: string[];
}

export interface HealthSources {
  live: () => Check;
  ready: () => Check;
  registry: Registry;
}

/** /healthz, /readyz and /metrics on one port. */
export class HealthServer {
  private readonly server: Server;

  constructor(sources: HealthSources) {
    this.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const probe = path === '/healthz' ? sources.live : path === '/readyz' ? sources.ready : undefined;
      if (probe) {
        const check = probe();
        res.writeHead(check.ok ? 200 : 503, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`${check.lines.join('\n')}\n${check.ok ? 'ok' : 'failed'}\n`);
        return;
      }
      if (path === '/metrics') {
        sources.registry
          .metrics()
          .then((text) => {
            res.writeHead(200, { 'content-type': sources.registry.contentType });
            res.end(text);
          })
          .catch((error: unknown) => {
            res.writeHead(500, { 'content-type': 'text/plain' });
            res.end(String(error));
          });
        return;
      }
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found\n');
    });
  }

  listen(port: number, host = '0.0.0.0'): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve((this.server.address() as AddressInfo).port));
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
