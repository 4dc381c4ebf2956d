/**
 * What the scale benchmarks read from the processes they run: memory from /proc, request counts and
 * work-queue histograms from the controller's own metrics, review latency over HTTPS.
 */
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';

export const MiB = 2 ** 20;

export const log = (msg: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function procStatus(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
}

export const currentRss = (pid: number | undefined) => procStatus(pid, 'VmRSS');
export const peakRss = (pid: number | undefined) => procStatus(pid, 'VmHWM');

export const mib = (bytes: number) => +(bytes / MiB).toFixed(1);

/** staticsite_controller_api_requests_total by `verb resource code`. */
export function requestCounts(metrics: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of metrics.split('\n')) {
    const m = /^staticsite_controller_api_requests_total\{verb="(\w+)",resource="([^"]*)",code="(\d+)"\} (\d+)/.exec(
      line,
    );
    if (!m) continue;
    const key = `${m[1]} ${m[2]} ${m[3]}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(m[4]));
  }
  return counts;
}

export function minus(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) delta.set(k, v - (before.get(k) ?? 0));
  return delta;
}

const READ_VERBS = new Set(['get', 'list', 'watch', 'GET', 'LIST', 'WATCH']);

/** Reviews that store nothing: the start-up permission checks and the metrics endpoint's authorization. */
const CHECKS = new Set(['selfsubjectaccessreviews', 'tokenreviews', 'subjectaccessreviews']);

/**
 * Requests by kind: reads, writes (Leases apart: leader election and hostname claims), Leases,
 * Events, and checks (access reviews, which store nothing).
 */
export function requestSummary(counts: Map<string, number>) {
  const by = { reads: 0, writes: 0, leases: 0, events: 0, checks: 0 };
  for (const [key, n] of counts) {
    const [verb = '', resource = ''] = key.split(' ');
    if (resource.includes('leases')) by.leases += n;
    else if (resource === 'events') by.events += n;
    else if (CHECKS.has(resource)) by.checks += n;
    else if (READ_VERBS.has(verb)) by.reads += n;
    else by.writes += n;
  }
  return { ...by, byVerb: Object.fromEntries([...counts].sort((a, b) => b[1] - a[1])) };
}

/** The cumulative buckets (le → count) of one histogram, summed over the label sets that match. */
export function histogram(metrics: string, name: string, labels: Record<string, string> = {}): Map<number, number> {
  const buckets = new Map<number, number>();
  for (const line of metrics.split('\n')) {
    if (!line.startsWith(`${name}_bucket{`)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (le === undefined) continue;
    const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return buckets;
}

export function histogramMinus(after: Map<number, number>, before: Map<number, number>): Map<number, number> {
  return new Map([...after].map(([le, n]) => [le, n - (before.get(le) ?? 0)]));
}

/**
 * Prometheus' histogram_quantile: the bucket that holds the q-th observation, linearly within it;
 * the highest finite bound when it falls in +Inf. Undefined for an empty histogram.
 */
export function quantile(q: number, buckets: Map<number, number>): number | undefined {
  const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
  const total = sorted.at(-1)?.[1] ?? 0;
  if (total === 0) return undefined;
  const rank = q * total;
  let [lowerBound, lowerCount] = [0, 0];
  for (const [bound, count] of sorted) {
    if (count >= rank) {
      if (bound === Number.POSITIVE_INFINITY) return lowerBound;
      return lowerBound + ((bound - lowerBound) * (rank - lowerCount)) / Math.max(count - lowerCount, 1);
    }
    [lowerBound, lowerCount] = [bound, count];
  }
  return lowerBound;
}

export function quantiles(buckets: Map<number, number>) {
  const seconds = (q: number) => {
    const v = quantile(q, buckets);
    return v === undefined ? null : +v.toFixed(4);
  };
  const total = [...buckets].find(([le]) => le === Number.POSITIVE_INFINITY)?.[1] ?? 0;
  return { items: total, p50: seconds(0.5), p90: seconds(0.9), p99: seconds(0.99) };
}

/** One POST of `body` to an HTTPS endpoint that `ca` signs; resolves with the status and the ms it took. */
export function timedPost(url: string, ca: string, body: string): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      url,
      {
        method: 'POST',
        ca,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export function percentile(sortedMs: number[], q: number): number {
  return +(sortedMs[Math.min(sortedMs.length - 1, Math.floor(q * sortedMs.length))] ?? 0).toFixed(2);
}

/** Runs `task` for each of `items`, `concurrency` at a time. */
export async function pool<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await task(items[next++] as T);
    }),
  );
}

/** What every scale benchmark's report starts with: its settings and the machine's load at the end. */
export async function runHeader(settings: {
  sites: number;
  workers: number;
  qps: number;
  controllerManagerQps: number;
}) {
  return { ...settings, loadAverage: (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ') };
}
