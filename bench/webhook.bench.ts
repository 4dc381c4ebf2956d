/**
 * Webhook throughput and latency over HTTPS with keep-alive on loopback, against a bare Node HTTPS
 * server answering a fixed JSON, with the same clients in the same run.
 *   0. Warm-up: 3 s of wrk on each server, not recorded.
 *   1. Throughput, wrk (1 thread, 32 connections): bare, then POST /validate with a StaticSite CREATE
 *      review on the real webhook; repeated for BENCH_ROUNDS rounds, reported per round and as medians.
 *   2. Latency at a fixed 1,000 reviews/s for BENCH_LATENCY_SECONDS (30), vegeta (open loop: requests
 *      leave on schedule whether or not earlier ones have answered; a pool of 32 keep-alive
 *      connections, as the API server keeps): bare, then webhook, BENCH_ROUNDS rounds. Percentiles
 *      over the whole run and over the steady state after the first second (connection setup).
 *      For the webhook it also reads its own duration histogram (from /metrics, before and after), to
 *      tell time spent inside the process from time spent in the client, the kernel and the VM.
 * Phase 1 also runs a controller-runtime v0.25 webhook with the same rules written by hand in Go
 * (bench/go-webhook, built from the Go module proxy into the cache by its build.sh), and reports
 * each server's CPU per request from /proc/PID/stat.
 * Each phase also reports the CPU time the hypervisor stole from this machine (/proc/stat), since on
 * a shared VM that, not the code, can decide a tail.
 * With a baseline (bench/baseline.ts: the last release, or BENCH_BASELINE=<commit>; none to skip),
 * phase 1 also runs that tree's webhook the same way, side by side in each round.
 * Run: npm run bench:webhook   (needs wrk: apt-get install wrk; builds vegeta with Go on first use)
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { cpus, homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../devenv/ports.ts';
import { loopbackCerts } from '../devenv/webhook-certs.ts';
import { webhookRuntime } from '../test/support/webhook-manifest.ts';
import { baselineTree as baseline, baselineNodeOptions } from './baseline.ts';
import { validateReview } from './validate-review.ts';

const run = promisify(execFile);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = 32;
const rate = 1000;
const latencySeconds = Number(process.env.BENCH_LATENCY_SECONDS ?? 30);
/** BENCH_WEBHOOK_NODE_OPTIONS overrides the manifest's NODE_OPTIONS for our webhook. */
const webhookNodeOptions = process.env.BENCH_WEBHOOK_NODE_OPTIONS ?? webhookRuntime().nodeOptions;
const VEGETA = 'github.com/tsenart/vegeta/v12@v12.13.0';
const { name: reviewName, text: review } = validateReview();

/** vegeta, built once into the cache beside the control plane's, keyed by its module version. */
async function vegetaBinary(): Promise<string> {
  const dir = join(homedir(), '.cache', 'staticsite-operator', 'tools', VEGETA.replace(/[/@]/g, '_'));
  const binary = join(dir, 'vegeta');
  if (existsSync(binary)) return binary;
  await mkdir(dir, { recursive: true });
  process.stderr.write(`building ${VEGETA} (once)...\n`);
  await run('go', ['install', VEGETA], { env: { ...process.env, GOBIN: dir, GOFLAGS: '-mod=mod' } });
  return binary;
}

function cpuTicks(): { steal: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  return { steal: fields[7] ?? 0, total: fields.reduce((a, b) => a + b, 0) };
}

/** Runs `measure` and adds the share of CPU time stolen by the hypervisor meanwhile, in percent. */
async function withSteal<T extends object>(measure: () => Promise<T>): Promise<T & { stealPercent: number }> {
  const before = cpuTicks();
  const result = await measure();
  const after = cpuTicks();
  const total = after.total - before.total;
  return { ...result, stealPercent: total > 0 ? +((100 * (after.steal - before.steal)) / total).toFixed(1) : 0 };
}

type Server = Awaited<ReturnType<typeof startServer>>;

/** `webhook` from this tree, or from the baseline's (`tree`), run the same way. */
async function startServer(mode: 'bare' | 'webhook' | 'go', certDir: string, baselineDir?: string) {
  const tree = baselineDir ?? new URL('../', import.meta.url).pathname;
  const goPort = mode === 'go' ? await freePort() : 0;
  const child =
    mode === 'go'
      ? spawn(goWebhookBinary(), ['--cert-dir', certDir, '--port', String(goPort)], {
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      : spawn(process.execPath, [join(tree, 'bench', 'webhook-server.ts'), '--mode', mode, '--cert-dir', certDir], {
          stdio: ['ignore', 'pipe', 'inherit'],
          // Each webhook runs with its own manifest's NODE_OPTIONS, as it ships (bench/baseline.ts).
          env:
            mode !== 'webhook'
              ? process.env
              : { ...process.env, NODE_OPTIONS: baselineDir ? baselineNodeOptions(baselineDir) : webhookNodeOptions },
        });
  const [port, metricsPort] =
    mode === 'go'
      ? await goListening(child, goPort)
      : await new Promise<[number, number]>((resolve, reject) => {
          child.stdout?.on('data', (chunk: Buffer) => {
            const match = /listening (\d+)(?: metrics (\d+))?/.exec(chunk.toString());
            if (match) resolve([Number(match[1]), Number(match[2] ?? 0)]);
          });
          child.on('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
        });
  const status = () => readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const peakRssMb = () => Math.round(Number(/VmHWM:\s+(\d+)/.exec(status())?.[1] ?? 0) / 1024);
  const rssMb = () => Math.round(Number(/VmRSS:\s+(\d+)/.exec(status())?.[1] ?? 0) / 1024);
  /** User + system CPU of the server process so far, in seconds (USER_HZ 100). */
  const cpuSeconds = () => {
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
  const url = `https://127.0.0.1:${port}${mode === 'bare' ? '/' : '/validate'}`;
  return { url, metricsPort, peakRssMb, rssMb, cpuSeconds, stop: () => child.kill('SIGTERM') };
}

/** The controller-runtime webhook of bench/go-webhook, built once into the cache (build.sh). */
function goWebhookBinary(): string {
  const out = execFileSync('bash', [new URL('./go-webhook/build.sh', import.meta.url).pathname], { encoding: 'utf8' });
  return out.trim().split('\n').pop() ?? '';
}

/** Waits until the Go webhook accepts TLS connections on its port. */
async function goListening(child: ChildProcess, port: number): Promise<[number, number]> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`the Go webhook exited with ${child.exitCode}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return [port, 0];
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the Go webhook did not listen within 10 s');
}

/** wrk against one server, with the server's CPU per request over the run. */
async function measured(server: Server, script: string) {
  const cpuBefore = server.cpuSeconds();
  const result = await withSteal(() => wrk(server.url, script));
  const cpu = server.cpuSeconds() - cpuBefore;
  return { ...result, serverCpuMicrosecondsPerRequest: Math.round((cpu * 1e6) / (result.requestsPerSecond * seconds)) };
}

function toMs(text: string): number {
  const match = /([\d.]+)(us|ms|s)/.exec(text);
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

async function wrk(url: string, script: string) {
  const { stdout } = await run('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, url]);
  return {
    requestsPerSecond: Math.round(Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1])),
    p50Ms: toMs(/50%\s+(\S+)/.exec(stdout)?.[1] ?? ''),
    p99Ms: toMs(/99%\s+(\S+)/.exec(stdout)?.[1] ?? ''),
    errors: /(Non-2xx.*|Socket errors.*)/.exec(stdout)?.[1] ?? 'none',
  };
}

/** Nearest-rank percentile of latencies in nanoseconds, in milliseconds. */
function percentileMs(sortedNs: number[], p: number): number {
  const index = Math.min(sortedNs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedNs.length) - 1));
  return +((sortedNs[index] ?? Number.NaN) / 1e6).toFixed(2);
}

function latencySummary(latenciesNs: number[]) {
  const sorted = [...latenciesNs].sort((a, b) => a - b);
  return {
    requests: sorted.length,
    p50Ms: percentileMs(sorted, 50),
    p99Ms: percentileMs(sorted, 99),
    maxMs: percentileMs(sorted, 100),
  };
}

/**
 * vegeta at a fixed rate for `latencySeconds`. Besides the whole run it reports the first second,
 * in which vegeta opens its connections (up to 32, each a full TLS handshake with an RSA 2048
 * signature on the server), apart from the steady state after it. The API server keeps its webhook
 * connections open, so it pays that cost when it connects, not in every measurement window.
 */
async function vegeta(binary: string, url: string, dir: string, caFile: string) {
  const targets = join(dir, 'targets.txt');
  await writeFile(targets, `POST ${url}\nContent-Type: application/json\n@${join(dir, 'review.json')}\n`);
  const results = join(dir, 'results.bin');
  await run(binary, [
    'attack',
    `-targets=${targets}`,
    `-rate=${rate}/s`,
    `-duration=${latencySeconds}s`,
    `-root-certs=${caFile}`,
    `-connections=${connections}`,
    `-max-connections=${connections}`,
    `-output=${results}`,
  ]);
  // One JSON result a line (strings escaped, so an error text cannot split a line).
  const { stdout } = await run(binary, ['encode', '--to', 'json', results], { maxBuffer: 1 << 30 });
  const rows = stdout
    .trim()
    .split('\n')
    .map((line) => {
      const result = JSON.parse(line) as { timestamp: string; code: number; latency: number };
      return [Date.parse(result.timestamp), result.code, result.latency] as const;
    });
  let start = Number.POSITIVE_INFINITY;
  for (const [sent] of rows) start = Math.min(start, sent);
  const steady = rows.filter(([sent]) => sent - start >= 1000);
  return {
    successRatio: +(rows.filter(([, code]) => code === 200).length / rows.length).toFixed(4),
    all: latencySummary(rows.map(([, , latency]) => latency)),
    afterFirstSecond: latencySummary(steady.map(([, , latency]) => latency)),
    firstSecond: latencySummary(rows.filter(([sent]) => sent - start < 1000).map(([, , latency]) => latency)),
  };
}

/** The webhook's own duration histogram for /validate: cumulative counts by upper bound (seconds). */
async function serverDurations(metricsPort: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const buckets = new Map<string, number>();
  for (const match of text.matchAll(
    /^staticsite_webhook_request_duration_seconds_bucket\{le="([^"]+)",path="\/validate"\} (\d+)$/gm,
  )) {
    buckets.set(match[1] as string, Number(match[2]));
  }
  return buckets;
}

/**
 * Time inside the webhook process (request dispatched to response written) during one phase, from
 * the histogram before and after it: the share of requests within each bucket bound.
 */
function serverSideShares(before: Map<string, number>, after: Map<string, number>): Record<string, string> {
  const total = (after.get('+Inf') ?? 0) - (before.get('+Inf') ?? 0);
  const shares: Record<string, string> = {};
  for (const [le, count] of after) {
    if (le === '+Inf' || Number(le) > 0.01) continue;
    shares[`<= ${Number(le) * 1000} ms`] = `${((100 * (count - (before.get(le) ?? 0))) / total).toFixed(2)} %`;
  }
  return shares;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const vegetaPath = await vegetaBinary();
const certs = await loopbackCerts();
const dir = await mkdtemp(join(tmpdir(), 'staticsite-bench-'));
const caFile = join(dir, 'ca.crt');
await writeFile(caFile, certs.ca.certPem);
await writeFile(join(dir, 'review.json'), review);
const script = join(dir, 'post.lua');
await writeFile(
  script,
  `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ${JSON.stringify(review)}\n`,
);
const baselineTree = process.env.BENCH_BASELINE === 'none' ? undefined : baseline();
const bare = await startServer('bare', certs.dir);
const webhook = await startServer('webhook', certs.dir);
const go = await startServer('go', certs.dir);
const previous = baselineTree ? await startServer('webhook', certs.dir, baselineTree.dir) : undefined;
try {
  // Warm-up: JIT-compile the servers' hot paths before anything is recorded.
  for (const server of [bare, webhook, go, previous]) {
    if (server) await run('wrk', ['-t1', `-c${connections}`, '-d3s', '-s', script, server.url]);
  }
  const throughput = [];
  for (let round = 1; round <= rounds; round++) {
    const b = await measured(bare, script);
    const w = await measured(webhook, script);
    const g = await measured(go, script);
    const p = previous ? await measured(previous, script) : undefined;
    throughput.push({
      round,
      bare: b,
      webhook: w,
      controllerRuntime: g,
      ...(p && { baseline: p }),
      ratio: +(w.requestsPerSecond / b.requestsPerSecond).toFixed(2),
      webhookOverControllerRuntime: +(w.requestsPerSecond / g.requestsPerSecond).toFixed(2),
      ...(p && { webhookOverBaseline: +(w.requestsPerSecond / p.requestsPerSecond).toFixed(2) }),
    });
  }
  const bareMedian = median(throughput.map((t) => t.bare.requestsPerSecond));
  const webhookMedian = median(throughput.map((t) => t.webhook.requestsPerSecond));
  const goMedian = median(throughput.map((t) => t.controllerRuntime.requestsPerSecond));
  const baselineMedian = median(throughput.map((t) => t.baseline?.requestsPerSecond ?? 0));
  const latency = [];
  for (let round = 1; round <= rounds; round++) {
    const b = await withSteal(() => vegeta(vegetaPath, bare.url, dir, caFile));
    const histogramBefore = await serverDurations(webhook.metricsPort);
    const w = await withSteal(() => vegeta(vegetaPath, webhook.url, dir, caFile));
    const webhookTimeInProcess = serverSideShares(histogramBefore, await serverDurations(webhook.metricsPort));
    latency.push({ round, bare: b, webhook: w, webhookTimeInProcess });
  }
  console.log(
    JSON.stringify(
      {
        machine: `${cpus().length} x ${cpus()[0]?.model}, Node ${process.version}`,
        seconds,
        webhookNodeOptions,
        review: reviewName,
        reviewBytes: Buffer.byteLength(review),
        throughput,
        medians: {
          bareRequestsPerSecond: bareMedian,
          webhookRequestsPerSecond: webhookMedian,
          controllerRuntimeRequestsPerSecond: goMedian,
          ratio: +(webhookMedian / bareMedian).toFixed(2),
          webhookOverControllerRuntime: +(webhookMedian / goMedian).toFixed(2),
          ...(previous && {
            baseline: baselineTree?.label,
            baselineRequestsPerSecond: baselineMedian,
            baselineRatio: +(baselineMedian / bareMedian).toFixed(2),
            webhookOverBaseline: +(webhookMedian / baselineMedian).toFixed(2),
          }),
          serverCpuMicrosecondsPerRequest: {
            bare: median(throughput.map((t) => t.bare.serverCpuMicrosecondsPerRequest)),
            webhook: median(throughput.map((t) => t.webhook.serverCpuMicrosecondsPerRequest)),
            controllerRuntime: median(throughput.map((t) => t.controllerRuntime.serverCpuMicrosecondsPerRequest)),
            ...(previous && {
              baseline: median(throughput.map((t) => t.baseline?.serverCpuMicrosecondsPerRequest ?? 0)),
            }),
          },
        },
        [`at${rate}PerSecond`]: { connections, seconds: latencySeconds, rounds: latency },
        peakRssMb: {
          bare: bare.peakRssMb(),
          webhook: webhook.peakRssMb(),
          controllerRuntime: go.peakRssMb(),
          ...(previous && { baseline: previous.peakRssMb() }),
        },
        rssMbAtEnd: {
          bare: bare.rssMb(),
          webhook: webhook.rssMb(),
          controllerRuntime: go.rssMb(),
          ...(previous && { baseline: previous.rssMb() }),
        },
      },
      null,
      2,
    ),
  );
} finally {
  bare.stop();
  webhook.stop();
  go.stop();
  previous?.stop();
  await rm(dir, { recursive: true, force: true });
  await rm(certs.dir, { recursive: true, force: true });
}
