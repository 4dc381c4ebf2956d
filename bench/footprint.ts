/**
 * The footprint of the three processes as the image runs them (the built CLI, a kubeconfig with a
 * client certificate against the real control plane), beside a bare Node HTTPS server as the floor:
 * - webhook (`webhook --kubeconfig`: the StaticSite informer on): CPU (user + system, from
 *   /proc/PID/stat) from spawn to its first answered review, RSS when ready, RSS and peak RSS after
 *   100,000 reviews (the API server's captured review, 32 keep-alive connections);
 * - the bare server: RSS after the same 100,000 requests from the same client;
 * - cert bootstrapper (`certs bootstrap --secret`, a first bootstrap): CPU and peak RSS of the run;
 * - controller (`controller --kubeconfig`, no sites): CPU from spawn to /readyz, RSS then.
 * Probes are read over HTTPS: with a cluster, each process serves its metrics port so by default.
 * With a baseline (bench/baseline.ts: the last release, or BENCH_BASELINE), its built webhook is
 * measured the same way in each round, right after ours.
 * Rounds alternate the processes. Run: npm run build && npm run bench:footprint -- [rounds]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCrd } from '../api/index.ts';
import { ControlPlane } from '../devenv/controlplane.ts';
import { installCrd } from '../devenv/crds.ts';
import { freePort } from '../devenv/ports.ts';
import { loopbackCerts } from '../devenv/webhook-certs.ts';
import { builtCli, webhookArgs } from '../devenv/webhook-process.ts';
import { webhookRuntime } from '../test/support/webhook-manifest.ts';
import { baselineCli, baselineNodeOptions, baselineTree } from './baseline.ts';
import { validateReview } from './validate-review.ts';

const rounds = Number(process.argv[2] ?? 3);
const REVIEWS = Number(process.env.BENCH_REVIEWS ?? 100_000);
const CONCURRENCY = 32;
const TICKS_PER_SECOND = 100; // USER_HZ on Linux
/** BENCH_PARTS=webhook,bare (for example) measures only those. */
const parts = new Set((process.env.BENCH_PARTS ?? 'webhook,bare,certs,controller').split(','));

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** RSS split as the kernel counts it: anonymous (heaps, OpenSSL, malloc) and file-backed (the node binary's pages). */
function memoryMb(pid: number): { rss: number; peak: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  const mb = (key: string) => Math.round(kb(key) / 1024);
  return { rss: mb('VmRSS'), peak: mb('VmHWM'), anon: mb('RssAnon'), file: mb('RssFile') };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => Promise<boolean>, child: ChildProcess, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what}: the process exited with ${child.exitCode}`);
    if (await check().catch(() => false)) return;
    await sleep(10);
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

function start(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...env } });
}

/** The webhook runs with its manifest's NODE_OPTIONS, as in a cluster (BENCH_WEBHOOK_NODE_OPTIONS to try others). */
const webhookNodeOptions = process.env.BENCH_WEBHOOK_NODE_OPTIONS ?? webhookRuntime().nodeOptions;

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** POSTs `count` bodies to `url` over `CONCURRENCY` keep-alive connections; every answer must be 200. */
async function load(url: string, body: string, count: number, ca: string): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca });
  let sent = 0;
  const started = performance.now();
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < count) {
        sent++;
        await one();
      }
    }),
  );
  agent.destroy();
  return Math.round(count / ((performance.now() - started) / 1000));
}

/** `/readyz` on a probes port, served over HTTPS with its self-signed certificate (secure metrics, the default). */
function ready(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(`https://127.0.0.1:${port}/readyz`, { rejectUnauthorized: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const spread = (xs: number[]) => `${Math.min(...xs)}–${Math.max(...xs)}`;
const summary = (xs: number[]) => ({ median: +median(xs).toFixed(2), spread: spread(xs.map((x) => +x.toFixed(2))) });

const BARE_SERVER = `
  const https = require('node:https');
  const fs = require('node:fs');
  const dir = process.argv[1];
  const answer = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'x', allowed: true } });
  https.createServer({ cert: fs.readFileSync(dir + '/tls.crt'), key: fs.readFileSync(dir + '/tls.key') }, (req, res) => {
    req.resume();
    req.on('end', () => { res.setHeader('content-type', 'application/json'); res.end(answer); });
  }).listen(Number(process.argv[2]), '127.0.0.1');
  process.on('SIGTERM', () => process.exit(0));`;

/** Rate and memory after the same load, per round. */
function loadedMemory() {
  return {
    rssAfter: [] as number[],
    anonAfter: [] as number[],
    fileAfter: [] as number[],
    peak: [] as number[],
    rate: [] as number[],
  };
}

/** Runs the load against a server, then records its rate and its memory a second later. */
async function measureLoaded(into: ReturnType<typeof loadedMemory>, pid: number, run: () => Promise<number>) {
  into.rate.push(await run());
  await sleep(1000);
  const after = memoryMb(pid);
  into.rssAfter.push(after.rss);
  into.anonAfter.push(after.anon);
  into.fileAfter.push(after.file);
  into.peak.push(after.peak);
}

const cli = builtCli();
const baseline = parts.has('webhook') ? baselineTree() : undefined;
const previous = baseline && {
  cli: baselineCli(baseline),
  // As its manifest ran it (bench/baseline.ts).
  nodeOptions: baselineNodeOptions(baseline.dir),
  memory: { toFirstReviewCpu: [] as number[], readyRss: [] as number[], ...loadedMemory() },
};
const cp = await new ControlPlane().start();
const report: Record<string, unknown> = { node: process.version, cpus: cpus().length, loadBefore: loadavg() };
try {
  await installCrd(cp.admin, buildCrd());
  const certs = await loopbackCerts();
  const review = validateReview().text;
  const webhook = { toFirstReviewCpu: [] as number[], readyRss: [] as number[], ...loadedMemory() };
  type WebhookMemory = typeof webhook;
  /** One webhook process from spawn to 100,000 reviews answered, its CPU and memory recorded. */
  async function measureWebhook(path: string, nodeOptions: string, into: WebhookMemory) {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const child = start(
      [path, ...webhookArgs({ certDir: certs.dir, port, metricsPort, kubeconfig: cp.kubeconfigPath })],
      { NODE_OPTIONS: nodeOptions },
    );
    const pid = child.pid as number;
    const url = `https://127.0.0.1:${port}/validate`;
    await until('webhook answers a review', async () => (await load(url, review, 1, certs.ca.certPem)) > 0, child);
    into.toFirstReviewCpu.push(cpuSeconds(pid));
    await until('webhook ready', () => ready(metricsPort), child);
    into.readyRss.push(memoryMb(pid).rss);
    await measureLoaded(into, pid, () => load(url, review, REVIEWS, certs.ca.certPem));
    await stop(child);
  }
  const bare = loadedMemory();
  const bootstrap = { cpu: [] as number[], peak: [] as number[] };
  const controller = { toReadyCpu: [] as number[], readyRss: [] as number[] };

  for (let round = 0; round < rounds; round++) {
    // The webhook, as the image runs it, with its informer; then the baseline's, the same way.
    if (parts.has('webhook')) await measureWebhook(cli, webhookNodeOptions, webhook);
    if (previous) await measureWebhook(previous.cli, previous.nodeOptions, previous.memory);
    // The floor: a bare Node HTTPS server, the same client and count.
    if (parts.has('bare')) {
      const port = await freePort();
      const child = spawn(process.execPath, ['-e', BARE_SERVER, certs.dir, String(port)], { stdio: 'inherit' });
      const url = `https://127.0.0.1:${port}/validate`;
      await until('bare server answers', async () => (await load(url, review, 1, certs.ca.certPem)) > 0, child);
      await measureLoaded(bare, child.pid as number, () => load(url, review, REVIEWS, certs.ca.certPem));
      await stop(child);
    }
    // The cert bootstrapper: a first bootstrap into a new Secret, to its exit.
    if (parts.has('certs')) {
      const run = spawn(
        '/usr/bin/time',
        [
          '-f',
          '%U %S %M',
          process.execPath,
          cli,
          'certs',
          'bootstrap',
          '--service=staticsite-webhook',
          '--namespace=default',
          `--secret=footprint-${round}-${Date.now()}`,
          `--kubeconfig=${cp.kubeconfigPath}`,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      run.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const code = await new Promise((resolve) => run.once('exit', resolve));
      if (code !== 0) throw new Error(`certs bootstrap exited ${code}: ${stderr}`);
      const [user, system, maxKb] = (stderr.trim().split('\n').pop() ?? '').split(' ').map(Number);
      bootstrap.cpu.push((user as number) + (system as number));
      bootstrap.peak.push(Math.round((maxKb as number) / 1024));
    }
    // The controller, to /readyz (informers synced), with no sites.
    if (parts.has('controller')) {
      const metricsPort = await freePort();
      const records = await mkdtemp(join(tmpdir(), 'footprint-records-'));
      const child = start([
        cli,
        'controller',
        `--kubeconfig=${cp.kubeconfigPath}`,
        `--metrics-port=${metricsPort}`,
        `--records-dir=${records}`,
        '--create-claims-namespace',
      ]);
      await until('controller ready', () => ready(metricsPort), child);
      controller.toReadyCpu.push(cpuSeconds(child.pid as number));
      controller.readyRss.push(memoryMb(child.pid as number).rss);
      await stop(child);
      await rm(records, { recursive: true, force: true });
    }
  }
  report.reviews = REVIEWS;
  report.webhookNodeOptions = webhookNodeOptions;
  report.webhook = {
    cpuSecondsToFirstReview: summary(webhook.toFirstReviewCpu),
    rssMbWhenReady: summary(webhook.readyRss),
    rssMbAfterReviews: summary(webhook.rssAfter),
    anonymousMbAfterReviews: summary(webhook.anonAfter),
    fileBackedMbAfterReviews: summary(webhook.fileAfter),
    peakRssMb: summary(webhook.peak),
    reviewsPerSecond: summary(webhook.rate),
  };
  if (previous) {
    const m = previous.memory;
    report.baseline = {
      tree: baseline?.label,
      nodeOptions: previous.nodeOptions,
      cpuSecondsToFirstReview: summary(m.toFirstReviewCpu),
      rssMbWhenReady: summary(m.readyRss),
      rssMbAfterReviews: summary(m.rssAfter),
      peakRssMb: summary(m.peak),
      reviewsPerSecond: summary(m.rate),
    };
  }
  report.bareNodeHttps = {
    rssMbAfterRequests: summary(bare.rssAfter),
    anonymousMbAfterRequests: summary(bare.anonAfter),
    fileBackedMbAfterRequests: summary(bare.fileAfter),
    peakRssMb: summary(bare.peak),
    requestsPerSecond: summary(bare.rate),
  };
  report.certsBootstrap = { cpuSeconds: summary(bootstrap.cpu), peakRssMb: summary(bootstrap.peak) };
  report.controller = {
    cpuSecondsToReady: summary(controller.toReadyCpu),
    rssMbWhenReady: summary(controller.readyRss),
  };
  report.loadAfter = loadavg();
  await rm(certs.dir, { recursive: true, force: true });
} finally {
  await cp.stop();
}
console.log(JSON.stringify(report, null, 2));
