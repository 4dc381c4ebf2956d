/**
 * 1,000 StaticSites created at once on the real control plane (etcd + kube-apiserver +
 * kube-controller-manager from test/controlplane, pods made Ready by the node simulator), with
 * `staticsite controller` running as a child process under its ServiceAccount.
 * Reports: time until every site is Ready for its generation, API requests per site by verb and
 * resource (from the controller's own request counter), and the controller's peak RSS (VmHWM).
 *
 * Run: PATH=$PWD/node_modules/.bin:$PATH node bench/controller-1000.ts [sites] [workers] [qps]
 * BENCH_KCM_QPS=N raises kube-controller-manager's client QPS (default its own, 20), so that its
 * Deployment and ReplicaSet controllers stop pacing the run.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCrd } from '../api/index.ts';
import { ControlPlane } from '../devenv/controlplane.ts';
import { eventually, installCrd } from '../devenv/crds.ts';
import { NodeSimulator } from '../devenv/node-simulator.ts';
import { builtCli } from '../devenv/webhook-process.ts';
import { applyControllerRbac, ControllerProcess } from '../test/support/controller-harness.ts';

const SITES = Number(process.argv[2] ?? 1000);
const WORKERS = Number(process.argv[3] ?? 8);
const QPS = Number(process.argv[4] ?? 100);
const SETTLED_SECONDS = Number(process.env.BENCH_SETTLED_SECONDS ?? 60);
const KCM_QPS = process.env.BENCH_KCM_QPS === undefined ? undefined : Number(process.env.BENCH_KCM_QPS);
const NS = 'bench';
const SYS = 'bench-system';
const sitesPath = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;

interface Site {
  metadata: { name: string; generation: number };
  status?: { observedGeneration?: number; conditions?: Array<{ type: string; status: string }> };
}

const log = (msg: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

async function currentRss(pid: number | undefined): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

async function peakRss(pid: number | undefined): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return kb * 1024;
}

const cp = await new ControlPlane({ controllerManagerQps: KCM_QPS }).start();
const nodes = new NodeSimulator(cp.admin);
await nodes.start();
const logDir = await mkdtemp(join(tmpdir(), 'bench-ctrl-'));
const recordsDir = join(logDir, 'records');
let controller: ControllerProcess | undefined;
try {
  await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
  await cp.ensureNamespace(NS);
  await applyControllerRbac(cp, SYS);
  const creds = await cp.serviceAccountCredentials(SYS, 'staticsite-controller');
  const kubeconfig = await cp.writeKubeconfig('bench-controller.kubeconfig', creds, 'staticsite-controller');
  controller = await ControllerProcess.start({
    controlPlane: cp,
    identity: 'bench',
    cli: builtCli(),
    kubeconfig,
    logDir,
    args: [
      '--namespace',
      NS,
      '--records-dir',
      recordsDir,
      '--workers',
      String(WORKERS),
      '--kube-api-qps',
      String(QPS),
      '--kube-api-burst',
      String(QPS * 2),
      '--leader-elect',
      '--leader-elect-namespace',
      SYS,
      '--log-level',
      'warn',
    ],
  });
  const c = controller;
  await eventually('controller ready', async () => (await c.probe('/readyz')) === 200, 60_000);
  const rssIdle = await peakRss(c.process.pid);

  log(`creating ${SITES} sites (workers ${WORKERS}, qps ${QPS})`);
  const started = performance.now();
  const names = Array.from({ length: SITES }, (_, i) => `site-${String(i).padStart(4, '0')}`);
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < names.length) {
        const name = names[next++] as string;
        await cp.admin.must('POST', sitesPath, {
          apiVersion: 'staticsite.dev/v1',
          kind: 'StaticSite',
          metadata: { name, namespace: NS },
          spec: { content: `<h1>${name}</h1>`, replicas: 1 },
        });
      }
    }),
  );
  const createdMs = performance.now() - started;
  log(`created in ${(createdMs / 1000).toFixed(1)} s; waiting for Ready`);
  let readyCount = 0;
  let childrenMs = 0;
  let podsMs = 0;
  const deploymentsPath = `/apis/apps/v1/namespaces/${NS}/deployments`;
  await eventually(
    'every site Ready for its generation',
    async () => {
      if (!podsMs) {
        const deployments = await cp.admin.must<{ items: Array<{ status?: { availableReplicas?: number } }> }>(
          'GET',
          deploymentsPath,
        );
        if (!childrenMs && deployments.items.length === SITES) childrenMs = performance.now() - started;
        if (deployments.items.length === SITES && deployments.items.every((d) => d.status?.availableReplicas === 1)) {
          podsMs = performance.now() - started;
        }
      }
      const list = await cp.admin.must<{ items: Site[] }>('GET', sitesPath);
      readyCount = list.items.filter(
        (s) =>
          s.status?.observedGeneration === s.metadata.generation &&
          s.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'),
      ).length;
      return readyCount === SITES;
    },
    30 * 60_000,
    1000,
  ).catch((error) => {
    log(`only ${readyCount}/${SITES} Ready`);
    throw error;
  });
  const convergedMs = performance.now() - started;
  if (!podsMs) podsMs = convergedMs; // the last Deployment became available between two polls
  log(`all Ready after ${(convergedMs / 1000).toFixed(1)} s`);

  const requestCounts = async () => {
    const counts = new Map<string, number>();
    for (const line of (await c.metricsText()).split('\n')) {
      const m = /^staticsite_controller_api_requests_total\{verb="(\w+)",resource="([^"]*)",code="(\d+)"\} (\d+)/.exec(
        line,
      );
      if (!m) continue;
      const key = `${m[1]} ${m[2]} ${m[3]}`;
      counts.set(key, (counts.get(key) ?? 0) + Number(m[4]));
    }
    return counts;
  };
  const requests = await requestCounts();
  // Settled: every site Ready. What the controller asks for while nothing changes (Lease renewals
  // apart), and what it holds then.
  log(`settled; watching for ${SETTLED_SECONDS} s`);
  await new Promise((resolve) => setTimeout(resolve, SETTLED_SECONDS * 1000));
  const settledRequests = Object.fromEntries(
    [...(await requestCounts()).entries()]
      .map(([k, v]) => [k, v - (requests.get(k) ?? 0)] as const)
      .filter(([k, v]) => v > 0 && !k.includes('leases')),
  );
  const rssSettled = await currentRss(c.process.pid);
  const reconciles = await c.metric('controller_runtime_reconcile_total');
  const errors = await c.metric('controller_runtime_reconcile_errors_total');
  const rssPeak = await peakRss(c.process.pid);
  const records = (await readdir(recordsDir)).filter((f) => f.endsWith('.json')).length;
  const rows = [...requests.entries()].sort((a, b) => b[1] - a[1]);
  const sum = (pred: (k: string) => boolean) => rows.filter(([k]) => pred(k)).reduce((n, [, v]) => n + v, 0);
  const isLease = (k: string) => k.includes('leases');
  const isEvent = (k: string) => k.includes(' events ');
  const result = {
    sites: SITES,
    workers: WORKERS,
    qps: QPS,
    controllerManagerQps: KCM_QPS ?? 20,
    createSeconds: +(createdMs / 1000).toFixed(1),
    allDeploymentsExistSeconds: +(childrenMs / 1000).toFixed(1),
    allDeploymentsAvailableSeconds: +(podsMs / 1000).toFixed(1),
    convergeSeconds: +(convergedMs / 1000).toFixed(1),
    reconciles,
    reconcileErrors: errors,
    records,
    requestsTotal: sum(() => true),
    requestsExcludingLeaseAndEvents: sum((k) => !isLease(k) && !isEvent(k)),
    eventRequests: sum(isEvent),
    leaseRequests: sum(isLease),
    requests: Object.fromEntries(rows),
    rssIdleMiB: +(rssIdle / 2 ** 20).toFixed(1),
    rssPeakMiB: +(rssPeak / 2 ** 20).toFixed(1),
    settledSeconds: SETTLED_SECONDS,
    requestsWhileSettledExcludingLease: settledRequests,
    rssSettledMiB: +(rssSettled / 2 ** 20).toFixed(1),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  await controller?.stop();
  await nodes.stop();
  await cp.stop();
  await rm(logDir, { recursive: true, force: true });
}
