/**
 * N StaticSites created at once on the real control plane (etcd + kube-apiserver +
 * kube-controller-manager from test/controlplane, pods made Ready by the node simulator), through
 * the built webhook (registered as the mutating and validating webhook, as shipped), with
 * `staticsite controller` as a child process under its ServiceAccount. Reports, for that N:
 * - time until every site is Ready for its generation;
 * - the controller's RSS idle, settled and peak, and per site above idle;
 * - API requests per site by verb and resource (the controller's own request counter), and what
 *   it asks while settled;
 * - work-queue time percentiles (controller-runtime's workqueue_queue_duration_seconds): the burst
 *   of creates, and a trickle of edits while settled;
 * - a restart: time to resync, and its requests (reads only; 0 writes for unchanged sites);
 * - the webhook's RSS with N sites in its hostname index, and its review latency;
 * - the API server's own pace for the same objects: N sites and their children written by a plain
 *   client without limit, until every Deployment is available (the baseline).
 *
 * Run: PATH=$PWD/node_modules/.bin:$PATH node bench/controller-scale.ts [sites] [workers] [qps]
 * BENCH_KCM_QPS (default 200) sets kube-controller-manager's client QPS (its own default is 20),
 * so that its Deployment and ReplicaSet controllers do not pace the run; the node simulator has no
 * limit. BENCH_SETTLED_SECONDS (default 60) is the settled window. BENCH_CONTROLLER=baseline runs the
 * baseline's built controller (bench/baseline.ts: the last release, or BENCH_BASELINE) with everything
 * else the working tree's, for a comparison on the same machine.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCrd } from '../api/index.ts';
import { ControlPlane } from '../devenv/controlplane.ts';
import { eventually, installCrd } from '../devenv/crds.ts';
import type { KubeHttp } from '../devenv/kube-http.ts';
import { NodeSimulator } from '../devenv/node-simulator.ts';
import { builtCli } from '../devenv/webhook-process.ts';
import { ControllerProcess } from '../test/support/controller-harness.ts';
import { baselineCli, baselineTree } from './baseline.ts';
import { applyRbac, benchOptions, createRetrying, registeredWebhook } from './scale/cluster.ts';
import {
  currentRss,
  histogram,
  histogramMinus,
  log,
  mib,
  minus,
  peakRss,
  percentile,
  pool,
  quantiles,
  requestCounts,
  requestSummary,
  runHeader,
  sleep,
  timedPost,
} from './scale/measures.ts';

const options = benchOptions(1000);
const [SITES, WORKERS, QPS] = [options.sites, options.workers, options.qps];
const [KCM_QPS, SETTLED_SECONDS] = [options.kcmQps, options.settledSeconds];
const NS = 'bench';
const BASELINE_NS = 'baseline';
const SYS = 'bench-system';
const WEBHOOK_CONFIG = 'staticsite-bench';
const QUEUE = { name: 'staticsite' };
const repoRoot = new URL('../', import.meta.url).pathname;
const sitesPath = (ns: string) => `/apis/staticsite.dev/v1/namespaces/${ns}/staticsites`;

interface Site {
  metadata: { name: string; generation: number; labels?: Record<string, string> };
  status?: { observedGeneration?: number; conditions?: Array<{ type: string; status: string }> };
}

interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: Record<string, unknown> & { name: string };
  spec?: unknown;
  data?: unknown;
  status?: { availableReplicas?: number };
}

const siteNames = (prefix: string) =>
  Array.from({ length: SITES }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`);
const siteBody = (name: string, ns: string) => ({
  apiVersion: 'staticsite.dev/v1',
  kind: 'StaticSite',
  metadata: { name, namespace: ns },
  spec: { content: `<h1>${name}</h1>`, replicas: 1 },
});

function isReady(s: Site): boolean {
  return (
    s.status?.observedGeneration === s.metadata.generation &&
    (s.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ?? false)
  );
}

/** Polls until every site of `ns` is Ready for its generation; the seconds since `started`. */
async function allReady(admin: KubeHttp, ns: string, started: number, what: string): Promise<number> {
  let ready = 0;
  await eventually(
    what,
    async () => {
      const list = await admin.must<{ items: Site[] }>('GET', sitesPath(ns));
      ready = list.items.filter(isReady).length;
      return ready === SITES;
    },
    60 * 60_000,
    POLL_MS,
  ).catch((error) => {
    log(`only ${ready}/${SITES} Ready`);
    throw error;
  });
  return +((performance.now() - started) / 1000).toFixed(1);
}

/** Polls until `ns` has `SITES` Deployments, every one available; the seconds since `started`. */
async function allAvailable(admin: KubeHttp, ns: string, started: number): Promise<number> {
  await eventually(
    `every Deployment of ${ns} available`,
    async () => {
      const list = await admin.must<{ items: KubeObject[] }>('GET', `/apis/apps/v1/namespaces/${ns}/deployments`);
      return list.items.length === SITES && list.items.every((d) => d.status?.availableReplicas === 1);
    },
    60 * 60_000,
    POLL_MS,
  );
  return +((performance.now() - started) / 1000).toFixed(1);
}

/** `kind/name` → resourceVersion of every site, child and hostname claim. */
async function resourceVersions(admin: KubeHttp): Promise<Map<string, string>> {
  const versions = new Map<string, string>();
  for (const path of [
    sitesPath(NS),
    `/api/v1/namespaces/${NS}/configmaps`,
    `/api/v1/namespaces/${NS}/services`,
    `/apis/apps/v1/namespaces/${NS}/deployments`,
    `/apis/coordination.k8s.io/v1/namespaces/${SYS}/leases`,
  ]) {
    const list = await admin.must<{ items: Array<{ metadata: { name: string; resourceVersion: string } }> }>(
      'GET',
      path,
    );
    for (const o of list.items) {
      if (o.metadata.name === 'staticsite-controller') continue;
      versions.set(`${path.split('/').at(-1)}/${o.metadata.name}`, o.metadata.resourceVersion);
    }
  }
  return versions;
}

/** Relists and watch restarts so far, by informer and reason (beyond the initial lists). */
function informerCounts(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metrics.matchAll(/^staticsite_informer_(relists|watch_restarts)_total\{([^}]*)\} (\S+)/gm)) {
    const [, what, labels = '', value] = m;
    if (Number(value) > 0 && !labels.includes('reason="initial"')) out[`${what} ${labels}`] = Number(value);
  }
  return out;
}

function heapUsed(metrics: string): number {
  return Number(/^nodejs_heap_size_used_bytes (\S+)/m.exec(metrics)?.[1] ?? 0);
}

/**
 * Where the process's memory sits, from prom-client's default metrics, in MiB: V8's heap (capacity and
 * live data, in total and by space) and the memory outside it that V8 accounts for (buffers).
 */
function memoryProfile(metrics: string) {
  const value = (name: string) => mib(Number(new RegExp(`^${name} (\\S+)`, 'm').exec(metrics)?.[1] ?? 0));
  const spaces: Record<string, { capacityMiB: number; liveMiB: number }> = {};
  for (const m of metrics.matchAll(/^nodejs_heap_space_size_(total|used)_bytes\{space="([^"]+)"\} (\S+)/gm)) {
    const [, kind, space = '', bytes] = m;
    const entry = spaces[space] ?? { capacityMiB: 0, liveMiB: 0 };
    spaces[space] = entry;
    if (kind === 'total') entry.capacityMiB = mib(Number(bytes));
    else entry.liveMiB = mib(Number(bytes));
  }
  return {
    heapCapacityMiB: value('nodejs_heap_size_total_bytes'),
    heapLiveMiB: value('nodejs_heap_size_used_bytes'),
    externalMiB: value('nodejs_external_memory_bytes'),
    spaces,
  };
}

/** BENCH_API_BASELINE=off skips the API server's own pace (a memory run at 10,000 sites saves 26 minutes). */
const API_BASELINE = process.env.BENCH_API_BASELINE !== 'off';

/** How often the progress polls list every site: each list costs the API server, so less often at 10,000. */
const POLL_MS = Math.max(2000, SITES / 2);

const baseline = process.env.BENCH_CONTROLLER === 'baseline' ? baselineTree() : undefined;
if (process.env.BENCH_CONTROLLER === 'baseline' && !baseline) throw new Error('BENCH_CONTROLLER=baseline: no baseline');
const controllerCli = baseline ? baselineCli(baseline) : builtCli();
log(`controller: ${baseline ? `the baseline ${baseline.label}` : 'the working tree'} (${controllerCli})`);

const cp = await new ControlPlane({ controllerManagerQps: KCM_QPS }).start();
const nodes = new NodeSimulator(cp.admin, { resyncMs: 30_000 });
await nodes.start();
const logDir = await mkdtemp(join(tmpdir(), 'bench-ctrl-'));
const recordsDir = join(logDir, 'records');
let controller: ControllerProcess | undefined;
let registered: Awaited<ReturnType<typeof registeredWebhook>> | undefined;
try {
  await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
  await cp.ensureNamespace(NS);
  await cp.ensureNamespace(BASELINE_NS);
  await applyRbac(cp, SYS, ['manifests/webhook/webhook-rbac.yaml']);
  // The webhook, as shipped: its hostname index holds every site; registered for the bench namespace.
  registered = await registeredWebhook(cp, { system: SYS, sites: NS, configName: WEBHOOK_CONFIG });
  const wh = registered.webhook;
  await sleep(2000);
  const webhookIdle = await currentRss(wh.process.pid);

  const creds = await cp.serviceAccountCredentials(SYS, 'staticsite-controller');
  const kubeconfig = await cp.writeKubeconfig('bench-controller.kubeconfig', creds, 'staticsite-controller');
  const startController = async (identity: string) => {
    const c = await ControllerProcess.start({
      controlPlane: cp,
      identity,
      cli: controllerCli,
      kubeconfig,
      logDir,
      args: [
        ...['--namespace', NS, '--records-dir', recordsDir, '--workers', String(WORKERS)],
        ...['--kube-api-qps', String(QPS), '--kube-api-burst', String(QPS * 2)],
        ...['--leader-elect', '--leader-elect-namespace', SYS, '--log-level', 'warn'],
      ],
    });
    await eventually(`controller ${identity} ready`, async () => (await c.probe('/readyz')) === 200, 120_000, 100);
    return c;
  };
  let c = await startController('bench');
  controller = c;
  const rssIdle = await currentRss(c.process.pid);
  const metricsIdle = await c.metricsText();
  const heapIdle = heapUsed(metricsIdle);

  log(`creating ${SITES} sites through the webhook (workers ${WORKERS}, qps ${QPS}, kcm qps ${KCM_QPS})`);
  const started = performance.now();
  let createRetries = 0;
  await pool(siteNames('site'), 32, async (name) => {
    createRetries += await createRetrying(cp.admin, sitesPath(NS), siteBody(name, NS));
  });
  const createSeconds = +((performance.now() - started) / 1000).toFixed(1);
  log(`created in ${createSeconds} s; waiting for Ready`);
  const convergeSeconds = await allReady(cp.admin, NS, started, 'every site Ready for its generation');
  log(`all Ready after ${convergeSeconds} s`);
  const rssPeakCreate = await peakRss(c.process.pid);

  const metricsAtReady = await c.metricsText();
  const requests = requestCounts(metricsAtReady);
  const burstQueue = quantiles(histogram(metricsAtReady, 'workqueue_queue_duration_seconds', QUEUE));

  log(`settled; watching for ${SETTLED_SECONDS} s`);
  await sleep(SETTLED_SECONDS * 1000);
  const metricsSettled = await c.metricsText();
  const settledRequests = requestSummary(minus(requestCounts(metricsSettled), requests));
  const rssSettled = await currentRss(c.process.pid);
  const heapSettled = heapUsed(metricsSettled);

  // A trickle of edits while settled: 10 a second for 30 s, each a new content (a rollout).
  log('a trickle of edits: 10 a second for 30 s');
  const queueBefore = histogram(metricsSettled, 'workqueue_queue_duration_seconds', QUEUE);
  const edited = siteNames('site')
    .filter((_, i) => i % Math.max(1, Math.floor(SITES / 300)) === 0)
    .slice(0, 300);
  const trickleStarted = performance.now();
  for (const [i, name] of edited.entries()) {
    await cp.admin.must(
      'PATCH',
      `${sitesPath(NS)}/${name}`,
      { spec: { content: `<h1>${name} edited</h1>` } },
      { contentType: 'application/merge-patch+json' },
    );
    const due = trickleStarted + (i + 1) * 100;
    if (due > performance.now()) await sleep(due - performance.now());
  }
  const trickleReadySeconds = await allReady(cp.admin, NS, trickleStarted, 'every edited site Ready again');
  const metricsAfterTrickle = await c.metricsText();
  const trickleQueue = quantiles(
    histogramMinus(histogram(metricsAfterTrickle, 'workqueue_queue_duration_seconds', QUEUE), queueBefore),
  );
  // A relist requeues every key: it shows in the trickle's queue time at once.
  const informerRestarts = informerCounts(metricsAfterTrickle);

  // The webhook with every site in its index.
  log('webhook: RSS and review latency');
  const webhookRss = await currentRss(wh.process.pid);
  interface Review {
    request: { uid: string; name: string; namespace: string; object: { metadata: Record<string, string> } };
  }
  const fixture = JSON.parse(
    await readFile(join(repoRoot, 'test/fixtures/admission/create-v1.json'), 'utf8'),
  ) as Review;
  const latencies: number[] = [];
  const { ca } = registered;
  for (let i = 0; i < 1000; i++) {
    const review = structuredClone(fixture);
    review.request.uid = `bench-${i}`;
    review.request.name = `new-${i}`;
    review.request.namespace = NS;
    review.request.object.metadata = { name: `new-${i}`, namespace: NS };
    const path = i % 2 === 0 ? '/mutate' : '/validate';
    const { status, ms } = await timedPost(`${wh.url}${path}`, ca, JSON.stringify(review));
    if (status !== 200) throw new Error(`webhook ${path}: HTTP ${status}`);
    if (i >= 100) latencies.push(ms);
  }
  latencies.sort((a, b) => a - b);

  // A restart: the new process lists, watches and finds every site converged. Whether it wrote
  // anything is read from the objects themselves: the resourceVersion of every site, child and
  // hostname claim before and after (the leader-election Lease apart).
  log('restart');
  const readyBefore = rssSettled;
  const versionsBefore = await resourceVersions(cp.admin);
  await c.stop();
  const restartStarted = performance.now();
  c = await startController('bench-restarted');
  controller = c;
  const restarted = c;
  const restartReadySeconds = +((performance.now() - restartStarted) / 1000).toFixed(1);
  await eventually(
    'every site reconciled after the restart, the queue empty',
    async () =>
      (await restarted.metric('controller_runtime_reconcile_total')) >= SITES &&
      (await restarted.metric('workqueue_depth', QUEUE)) === 0,
    30 * 60_000,
    250,
  );
  const restartResyncSeconds = +((performance.now() - restartStarted) / 1000).toFixed(1);
  const versionsAfter = await resourceVersions(cp.admin);
  const objectsChanged = [...versionsBefore].filter(([k, v]) => versionsAfter.get(k) !== v).map(([k]) => k);
  const restartMetrics = await c.metricsText();
  const restartRequests = requestSummary(requestCounts(restartMetrics));
  const restartQueue = quantiles(histogram(restartMetrics, 'workqueue_queue_duration_seconds', QUEUE));
  const restartRss = await currentRss(c.process.pid);

  // The API server's own pace for the same objects: the controller stopped, a plain client writes a
  // site and its three children (copies of a reconciled site's) per name, 32 at a time, no limit.
  log('baseline: the same objects from a plain client');
  const templateSite = 'site-00000';
  const templates: KubeObject[] = [];
  for (const [group, plural] of [
    ['/api/v1', 'configmaps'],
    ['/api/v1', 'services'],
    ['/apis/apps/v1', 'deployments'],
  ] as const) {
    const o = await cp.admin.must<KubeObject>('GET', `${group}/namespaces/${NS}/${plural}/${templateSite}`);
    templates.push({ ...o, metadata: { name: '', labels: o.metadata.labels, annotations: o.metadata.annotations } });
  }
  const collection = (o: KubeObject) =>
    `${o.apiVersion === 'v1' ? '/api/v1' : `/apis/${o.apiVersion}`}/namespaces/${BASELINE_NS}/${o.kind?.toLowerCase()}s`;
  const asBaseline = (o: KubeObject, name: string): KubeObject => {
    const copy = JSON.parse(JSON.stringify(o).replaceAll(templateSite, name)) as KubeObject;
    const spec = copy.spec as { clusterIP?: string; clusterIPs?: string[] } | undefined;
    if (spec) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    return { ...copy, metadata: { ...copy.metadata, name, namespace: BASELINE_NS } };
  };
  await c.stop();
  controller = undefined;
  let baselineSeconds = Number.NaN;
  if (API_BASELINE) {
    const baselineStarted = performance.now();
    await pool(siteNames('site'), 32, async (name) => {
      await cp.admin.must('POST', sitesPath(BASELINE_NS), siteBody(name, BASELINE_NS));
      for (const t of templates) await cp.admin.must('POST', collection(t), asBaseline(t, name));
    });
    baselineSeconds = await allAvailable(cp.admin, BASELINE_NS, baselineStarted);
    log(`baseline: every Deployment available after ${baselineSeconds} s`);
  }

  const summary = requestSummary(requests);
  const records = (await readdir(recordsDir)).filter((f) => f.endsWith('.json')).length;
  const perSite = (n: number) => +(n / SITES).toFixed(2);
  const result = {
    ...(await runHeader({ sites: SITES, workers: WORKERS, qps: QPS, controllerManagerQps: KCM_QPS })),
    controller: baseline ? baseline.label : 'working tree',
    createSeconds,
    createRetries,
    convergeSeconds,
    baselineSeconds,
    convergeOverBaseline: +(convergeSeconds / baselineSeconds).toFixed(2),
    records,
    requestsPerSite: {
      writes: perSite(summary.writes),
      reads: perSite(summary.reads),
      events: perSite(summary.events),
    },
    requests: summary.byVerb,
    settledSeconds: SETTLED_SECONDS,
    requestsWhileSettled: {
      writes: settledRequests.writes,
      reads: settledRequests.reads,
      events: settledRequests.events,
    },
    rssIdleMiB: mib(rssIdle),
    rssSettledMiB: mib(rssSettled),
    heapUsedIdleMiB: mib(heapIdle),
    heapUsedSettledMiB: mib(heapSettled),
    // V8's live heap (prom-client's nodejs_heap_size_used_bytes): RSS also holds pages V8 has not
    // given back since the burst, and the restart's RSS the lists it has just read.
    heapKbPerSite: +((heapSettled - heapIdle) / 1024 / SITES).toFixed(1),
    memory: { idle: memoryProfile(metricsIdle), settled: memoryProfile(metricsSettled) },
    rssPeakMiB: mib(rssPeakCreate),
    kbPerSiteAboveIdle: +((rssSettled - rssIdle) / 1024 / SITES).toFixed(1),
    // The restarted process holds the same caches without the garbage of the create burst.
    kbPerSiteAboveIdleAfterRestart: +((restartRss - rssIdle) / 1024 / SITES).toFixed(1),
    queueSeconds: { burst: burstQueue, trickle: trickleQueue, restart: restartQueue },
    trickle: { edits: edited.length, allReadyAfterSeconds: trickleReadySeconds, informerRestarts },
    restart: {
      readySeconds: restartReadySeconds,
      resyncSeconds: restartResyncSeconds,
      objectsCompared: versionsBefore.size,
      objectsWritten: objectsChanged.length,
      objectsWrittenExamples: objectsChanged.slice(0, 5),
      writes: restartRequests.writes,
      leaseRequests: restartRequests.leases,
      events: restartRequests.events,
      reads: restartRequests.reads,
      requests: restartRequests.byVerb,
      rssMiB: mib(restartRss),
      rssBeforeMiB: mib(readyBefore),
    },
    webhook: {
      rssIdleMiB: mib(webhookIdle),
      rssWithSitesMiB: mib(webhookRss),
      kbPerSite: +((webhookRss - webhookIdle) / 1024 / SITES).toFixed(1),
      reviewMs: { n: latencies.length, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
    },
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  await controller?.stop();
  await registered?.stop();
  await nodes.stop();
  await cp.stop();
  await rm(logDir, { recursive: true, force: true });
}
