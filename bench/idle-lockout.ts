/**
 * Can idle clients lock the API server out? The built webhook (standalone, as shipped) while N TLS
 * connections each send one valid review with keep-alive and then stay silent, from one address
 * (127.0.0.1) or spread over 16 (127.0.1.1-16, as many pods would), for N = 1x, 4x and 10x the
 * connection cap. Meanwhile an "API server" from its own address (127.0.0.2) sends a review every
 * 50 ms, each on a new connection (the worst case: it must get in), for 10 s. Reports, for each N:
 * the idle connections the webhook held, the API server's reviews answered, failed, and their
 * latency p50/p99/max (handshake included). Last, the same with N half-open connections (TCP only,
 * no TLS handshake started), from 1 and from 16 addresses.
 * Run: npm run build && node bench/idle-lockout.ts
 */
import { request } from 'node:https';
import { connect as connectTcp, type Socket } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { type ConnectionOptions, connect, type TLSSocket } from 'node:tls';
import { loopbackCerts } from '../devenv/webhook-certs.ts';
import { WebhookProcess } from '../devenv/webhook-process.ts';
import { CONNECTION_SETTINGS } from '../webhook/server-settings.ts';
import { validateReview } from './validate-review.ts';

const review = validateReview().text;
const cap = CONNECTION_SETTINGS.maxConnections;
const certs = await loopbackCerts();

/** One idle client: a TLS connection that sends one review with keep-alive, reads the answer, stays. */
function idleClient(port: number, localAddress: string): Promise<TLSSocket | undefined> {
  return new Promise((resolve) => {
    const options = { host: '127.0.0.1', port, localAddress, ca: certs.ca.certPem, servername: 'localhost' };
    const socket = connect(options as ConnectionOptions);
    socket.once('secureConnect', () => {
      socket.write(
        `POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(review)}\r\nConnection: keep-alive\r\n\r\n${review}`,
      );
      socket.once('data', () => resolve(socket));
    });
    socket.on('error', () => resolve(undefined));
    socket.setTimeout(5_000, () => resolve(undefined));
  });
}

/** A half-open client: a TCP connection that never starts its TLS handshake. */
function halfOpenClient(port: number, localAddress: string): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const socket = connectTcp({ host: '127.0.0.1', port, localAddress }, () => resolve(socket));
    socket.on('error', () => resolve(undefined));
  });
}

/** The API server's review on a new connection from its own address: latency in ms, or undefined. */
function apiServerReview(port: number): Promise<number | undefined> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/validate',
        method: 'POST',
        localAddress: '127.0.0.2',
        ca: certs.ca.certPem,
        servername: 'localhost',
        agent: false,
        timeout: 10_000,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(review) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200 ? performance.now() - started : undefined));
      },
    );
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => req.destroy());
    req.end(review);
  });
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : +(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0).toFixed(1);

const rows = [];
const modes = [
  ...[1, 16].flatMap((sources) => [1, 4, 10].map((multiple) => ({ kind: 'idle keep-alive', sources, multiple }))),
  ...[1, 16].map((sources) => ({ kind: 'half-open (no TLS handshake)', sources, multiple: 1 })),
];
for (const { kind, sources, multiple } of modes) {
  {
    const webhook = await WebhookProcess.start({ certDir: certs.dir, args: ['--shutdown-delay=0s'] });
    const port = Number(new URL(webhook.url).port);
    const idle: Socket[] = [];
    const opening: Array<Promise<Socket | undefined>> = [];
    const open = kind === 'idle keep-alive' ? idleClient : halfOpenClient;
    for (let i = 0; i < multiple * cap; i++) {
      opening.push(open(port, sources === 1 ? '127.0.0.1' : `127.0.1.${1 + (i % sources)}`));
      if (opening.length === 64) idle.push(...((await Promise.all(opening.splice(0))).filter(Boolean) as Socket[]));
    }
    idle.push(...((await Promise.all(opening)).filter(Boolean) as Socket[]));
    const held = idle.filter((s) => !s.destroyed).length;
    const latencies: number[] = [];
    let failed = 0;
    const calls = [];
    for (let t = 0; t < 10_000; t += 50) {
      calls.push(apiServerReview(port).then((ms) => (ms === undefined ? failed++ : latencies.push(ms))));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await Promise.all(calls);
    const stillHeld = idle.filter((s) => !s.destroyed).length;
    latencies.sort((a, b) => a - b);
    rows.push({
      kind,
      sources,
      idleAttempted: multiple * cap,
      idleHeldAfterOpening: held,
      idleHeldAtEnd: stillHeld,
      apiServerAnswered: latencies.length,
      apiServerFailed: failed,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: percentile(latencies, 100),
    });
    for (const s of idle) s.destroy();
    await webhook.stop();
  }
}
console.log(
  JSON.stringify({ machine: `${cpus().length} x ${cpus()[0]?.model}`, load: loadavg()[0], cap, rows }, null, 1),
);
