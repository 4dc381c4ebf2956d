/**
 * Can idle clients lock the API server out? The built webhook (standalone, as shipped) while N TLS
 * connections each send one valid review with keep-alive and then stay silent, from one address
 * (127.0.0.1) or spread over 16 (127.0.1.1-16, as many pods would), for N = 1x, 4x and 10x the
 * connection cap. Meanwhile an "API server" from its own address (127.0.0.2) sends a review every
 * 50 ms, each on a new connection (the worst case: it must get in) with the 5 s timeout our webhook
 * configurations give a call, for 10 s. Reports, for each N: the attackers' connections the webhook
 * held, the API server's reviews answered, failed, and their latency p50/p99/max (handshake
 * included). Then the same with N half-open connections (TCP only, no TLS handshake started) and
 * with N slow-header connections (handshake done, request headers never finished). Last, a flood:
 * half-open connections opened at a steady rate from 16 addresses for the whole 10 s, at rising
 * rates, to find the rate from which the API server's calls fail.
 * Run: npm run build && node bench/idle-lockout.ts   (BENCH_MODES=flood: the flood alone)
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { type ConnectionOptions, connect, type TLSSocket } from 'node:tls';
import { reviewOnNewConnection } from '../devenv/new-connection-review.ts';
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

/** A slow-header client: a TLS connection that sends the start of a request and never ends its headers. */
function slowHeaderClient(port: number, localAddress: string): Promise<TLSSocket | undefined> {
  return new Promise((resolve) => {
    const options = { host: '127.0.0.1', port, localAddress, ca: certs.ca.certPem, servername: 'localhost' };
    const socket = connect(options as ConnectionOptions);
    socket.once('secureConnect', () => {
      socket.write('POST /validate HTTP/1.1\r\nHost: localhost\r\n');
      resolve(socket);
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
async function apiServerReview(port: number): Promise<number | undefined> {
  const caPem = certs.ca.certPem;
  const answer = await reviewOnNewConnection({
    port,
    caPem,
    body: review,
    localAddress: '127.0.0.2',
    timeoutMs: 5_000,
  });
  return typeof answer === 'object' && answer.status === 200 ? answer.ms : undefined;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : +(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0).toFixed(1);

const OPENERS = {
  'idle keep-alive': idleClient,
  'half-open (no TLS handshake)': halfOpenClient,
  'slow headers (never finished)': slowHeaderClient,
} as const;
type Kind = keyof typeof OPENERS;

/** The API server's reviews, one every 50 ms for 10 s, while `during` runs. */
async function apiServerCalls(port: number) {
  const latencies: number[] = [];
  let failed = 0;
  const calls = [];
  for (let t = 0; t < 10_000; t += 50) {
    calls.push(apiServerReview(port).then((ms) => (ms === undefined ? failed++ : latencies.push(ms))));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await Promise.all(calls);
  latencies.sort((a, b) => a - b);
  return {
    apiServerAnswered: latencies.length,
    apiServerFailed: failed,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: percentile(latencies, 100),
  };
}

/** The webhook's connections closed by the fairness rule, by reason, from its /metrics (none before it counted them). */
async function reclaimed(webhook: WebhookProcess): Promise<Record<string, number | string>> {
  // Read after a flood, /metrics once did not answer within fetch's 10 s connect timeout: the row keeps its numbers.
  let text: string;
  try {
    text = await (await fetch(webhook.metricsUrl('/metrics'))).text();
  } catch (error) {
    return { metrics: `unreadable: ${(error as Error).message}` };
  }
  const counts: Record<string, number | string> = {};
  for (const [, reason, value] of text.matchAll(
    /^staticsite_webhook_connections_reclaimed_total\{reason="([^"]+)"\} (\S+)$/gm,
  )) {
    counts[reason as string] = Number(value);
  }
  return counts;
}

/**
 * The built webhook on a free port. Once more if it could not listen: the free port it was given
 * can be taken by another process before it binds (EADDRINUSE), which loses the whole run otherwise.
 */
async function startWebhook(): Promise<WebhookProcess> {
  const options = { certDir: certs.dir, args: ['--shutdown-delay=0s'] };
  return WebhookProcess.start(options).catch(() => WebhookProcess.start(options));
}

async function holding(kind: Kind, sources: number, multiple: number) {
  const webhook = await startWebhook();
  const port = Number(new URL(webhook.url).port);
  const held: Socket[] = [];
  const opening: Array<Promise<Socket | undefined>> = [];
  for (let i = 0; i < multiple * cap; i++) {
    opening.push(OPENERS[kind](port, sources === 1 ? '127.0.0.1' : `127.0.1.${1 + (i % sources)}`));
    if (opening.length === 64) held.push(...((await Promise.all(opening.splice(0))).filter(Boolean) as Socket[]));
  }
  held.push(...((await Promise.all(opening)).filter(Boolean) as Socket[]));
  const heldAfterOpening = held.filter((s) => !s.destroyed).length;
  const calls = await apiServerCalls(port);
  const row = {
    kind,
    sources,
    attempted: multiple * cap,
    heldAfterOpening,
    heldAtEnd: held.filter((s) => !s.destroyed).length,
    ...calls,
    reclaimed: await reclaimed(webhook),
  };
  for (const s of held) s.destroy();
  await webhook.stop();
  return row;
}

/** Half-open connections opened at `perSecond` from 16 addresses while the API server calls. */
async function flood(perSecond: number) {
  const webhook = await startWebhook();
  const port = Number(new URL(webhook.url).port);
  const sockets = new Set<Socket>();
  let opened = 0;
  const tickMs = 10;
  const timer = setInterval(() => {
    for (let i = 0; i < (perSecond * tickMs) / 1000; i++) {
      const socket = connectTcp({ host: '127.0.0.1', port, localAddress: `127.0.1.${1 + (opened++ % 16)}` });
      socket.on('error', () => {});
      socket.once('close', () => sockets.delete(socket));
      sockets.add(socket);
    }
  }, tickMs);
  const started = performance.now();
  const calls = await apiServerCalls(port);
  clearInterval(timer);
  const row = {
    kind: 'flood of half-open',
    askedPerSecond: perSecond,
    openedPerSecond: Math.round(opened / ((performance.now() - started) / 1000)),
    ...calls,
    reclaimed: await reclaimed(webhook),
  };
  for (const s of sockets) s.destroy();
  await webhook.stop();
  return row;
}

const rows = [];
const kinds = Object.keys(OPENERS) as Kind[];
if (process.env.BENCH_MODES !== 'flood') {
  for (const kind of kinds) {
    for (const sources of [1, 16]) {
      for (const multiple of [1, 4, 10]) rows.push(await holding(kind, sources, multiple));
    }
  }
}
for (const perSecond of [1_000, 2_000, 5_000, 10_000, 20_000]) rows.push(await flood(perSecond));
console.log(JSON.stringify({ machine: `${cpus().length} x ${cpus()[0]?.model}`, load: loadavg(), cap, rows }, null, 1));
