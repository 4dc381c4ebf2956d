/**
 * The webhook server and a bare Node HTTPS server on 127.0.0.1, ephemeral ports, certs from `certDir`:
 * what the webhook tests run and the webhook benchmarks compare.
 */
import { readFile } from 'node:fs/promises';
import type { RequestListener } from 'node:http';
import { createServer } from 'node:https';
import { join } from 'node:path';
import { pino } from 'pino';
import { type RunningWebhook, startWebhookServer, type WebhookServerOptions } from '../../webhook/server.ts';

export interface Listening {
  port: number;
  close(): Promise<void>;
}

/** The real webhook server as `staticsite webhook` runs it (metrics on an ephemeral port too). */
export function startLoopbackWebhook(
  certDir: string,
  extra: Partial<WebhookServerOptions> = {},
): Promise<RunningWebhook> {
  return startWebhookServer({
    certDir,
    port: 0,
    metricsPort: 0,
    host: '127.0.0.1',
    baseDomain: 'sites.test',
    logger: pino({ level: 'warn' }),
    ...extra,
  });
}

/** A bare Node HTTPS server with the same TLS settings as the webhook: the ceiling to compare with. */
export async function startBareHttps(certDir: string, listener: RequestListener): Promise<Listening> {
  const server = createServer(
    {
      cert: await readFile(join(certDir, 'tls.crt')),
      key: await readFile(join(certDir, 'tls.key')),
      minVersion: 'TLSv1.2',
    },
    listener,
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
