/**
 * Webhook throughput and latency over HTTPS with keep-alive on loopback.
 *   1. wrk (the same client, one after the other in this run): a bare Node HTTPS server answering a
 *      fixed JSON, then POST /validate with a StaticSite CREATE review on the real webhook.
 *   2. an open-loop client at a fixed 1,000 reviews/s against /validate: p50/p99 latency.
 * Run: npm run bench:webhook   (needs `wrk`: apt-get install wrk)
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request as httpsRequest } from 'node:https';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loopbackCerts } from '../test/support/webhook-certs.ts';

const run = promisify(execFile);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const review = readFileSync(
  new URL('../test/fixtures/admission/create-prod-one-replica.json', import.meta.url),
  'utf8',
).replace('"replicas": 1', '"replicas": 2');

async function startServer(mode: string, certDir: string) {
  const child = spawn(
    process.execPath,
    [new URL('./webhook-server.ts', import.meta.url).pathname, '--mode', mode, '--cert-dir', certDir],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      const match = /listening (\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
    child.on('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
  const peakRssMb = () => {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  };
  return { port, peakRssMb, stop: () => child.kill('SIGTERM') };
}

interface WrkResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: string;
}

function toMs(text: string): number {
  const match = /([\d.]+)(us|ms|s)/.exec(text);
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

async function wrk(url: string, dir: string): Promise<WrkResult> {
  const script = join(dir, 'post.lua');
  await writeFile(
    script,
    `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ${JSON.stringify(review)}\n`,
  );
  const { stdout } = await run('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, url]);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const p50 = /50%\s+(\S+)/.exec(stdout)?.[1] ?? '';
  const p99 = /99%\s+(\S+)/.exec(stdout)?.[1] ?? '';
  const errors = /(Non-2xx.*|Socket errors.*)/.exec(stdout)?.[1] ?? 'none';
  return { requestsPerSecond: Math.round(rps), p50Ms: toMs(p50), p99Ms: toMs(p99), errors };
}

/**
 * An open-loop client at a fixed rate over a few keep-alive connections: every millisecond it sends
 * the requests that are due by then, whether or not earlier ones have answered. Latency is timed from
 * each request's send; `lagMs` reports how far the client itself fell behind its schedule.
 */
async function fixedRate(port: number, ca: string, rate: number, connections: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections, ca });
  const total = rate * seconds;
  const latencies: number[] = [];
  let failed = 0;
  let maxLag = 0;
  const send = () =>
    new Promise<void>((resolve) => {
      const sent = performance.now();
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port,
          path: '/validate',
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode !== 200) failed++;
            latencies.push(performance.now() - sent);
            resolve();
          });
        },
      );
      req.on('error', () => {
        failed++;
        resolve();
      });
      req.end(review);
    });
  const start = performance.now();
  const inFlight: Promise<void>[] = [];
  while (inFlight.length < total) {
    const now = performance.now();
    const due = Math.min(total, Math.floor(((now - start) * rate) / 1000) + 1);
    if (due > inFlight.length) maxLag = Math.max(maxLag, now - start - (inFlight.length * 1000) / rate);
    while (inFlight.length < due) inFlight.push(send());
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inFlight);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => +(latencies[Math.ceil(q * latencies.length) - 1] ?? 0).toFixed(2);
  return {
    rate,
    connections,
    requests: latencies.length,
    failed,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: at(1),
    lagMs: +maxLag.toFixed(1),
  };
}

const certs = await loopbackCerts();
const dir = await mkdtemp(join(tmpdir(), 'staticsite-bench-'));
try {
  const bare = await startServer('bare', certs.dir);
  const bareResult = await wrk(`https://127.0.0.1:${bare.port}/`, dir);
  bare.stop();
  const webhook = await startServer('webhook', certs.dir);
  const webhookResult = await wrk(`https://127.0.0.1:${webhook.port}/validate`, dir);
  const latency = await fixedRate(
    webhook.port,
    certs.ca.certPem,
    1000,
    Number(process.env.BENCH_RATE_CONNECTIONS ?? 4),
  );
  const rss = webhook.peakRssMb();
  webhook.stop();
  console.log(
    JSON.stringify(
      {
        machine: `${cpus().length} x ${cpus()[0]?.model}, Node ${process.version}`,
        seconds,
        connections,
        bare: bareResult,
        webhook: webhookResult,
        ratio: +(webhookResult.requestsPerSecond / bareResult.requestsPerSecond).toFixed(2),
        at1000PerSecond: latency,
        webhookPeakRssMb: Math.round(rss),
      },
      null,
      2,
    ),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
  await rm(certs.dir, { recursive: true, force: true });
}
