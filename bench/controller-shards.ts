/**
 * The shard drills at scale: N StaticSites (default 10,000) on the real control plane, three
 * `staticsite controller --sharded` processes (the built CLI) and the built webhook labelling each
 * site with its shard at admission (`--shard-leases-namespace`). Reports:
 * - time until every site is Ready, and each replica's sites, reconciles, RSS settled and peak;
 * - kill -9 of one replica: the time until each of its sites is labelled for a live replica and
 *   reconciled there (its ConfigMap relabelled, its Ready condition at its generation), none lost;
 * - a fourth replica joins: the time until the ring's share is drained to it and reconciled there,
 *   how many sites moved and how many hand-overs the old replicas logged.
 * Compare the per-replica figures with `bench/controller-scale.ts` at the same N (one controller).
 *
 * Run: PATH=$PWD/node_modules/.bin:$PATH node bench/controller-shards.ts [sites] [workers] [qps]
 * BENCH_KCM_QPS (default 200) as in controller-scale.ts. The replicas keep the default Lease timing
 * (15 s duration, 10 s renew deadline, 2 s retry), as shipped.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCrd, DRAIN_LABEL, SHARD_LABEL } from '../api/index.ts';
import { ControlPlane } from '../devenv/controlplane.ts';
import { eventually, installCrd } from '../devenv/crds.ts';
import { NodeSimulator } from '../devenv/node-simulator.ts';
import type { ControllerProcess } from '../test/support/controller-harness.ts';
import { sitesPerShard, startShardController } from '../test/support/shards.ts';
import { applyRbac, benchOptions, createRetrying, registeredWebhook } from './scale/cluster.ts';
import { currentRss, log, mib, peakRss, pool, runHeader, sleep } from './scale/measures.ts';

const options = benchOptions(10_000);
const [SITES, WORKERS, QPS] = [options.sites, options.workers, options.qps];
const [KCM_QPS, SETTLED_SECONDS] = [options.kcmQps, options.settledSeconds];
const NS = 'shards';
const SYS = 'shards-system';
const WEBHOOK_CONFIG = 'staticsite-shards-bench';
const SITES_PATH = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
const CONFIGMAPS = `/api/v1/namespaces/${NS}/configmaps?labelSelector=app.kubernetes.io%2Fmanaged-by%3Dstaticsite-controller`;
const RBAC_FILES = ['manifests/webhook/webhook-rbac.yaml', 'manifests/overlays/sharded/shard-leases-rbac.yaml'];

interface Site {
  metadata: { name: string; generation: number; labels?: Record<string, string> };
  status?: {
    observedGeneration?: number;
    conditions?: Array<{ type: string; status: string; observedGeneration?: number }>;
  };
}

interface ConfigMap {
  metadata: { name: string; labels?: Record<string, string> };
}

const cp = await new ControlPlane({ controllerManagerQps: KCM_QPS }).start();
const nodes = new NodeSimulator(cp.admin, { resyncMs: 30_000 });
await nodes.start();
const logDir = await mkdtemp(join(tmpdir(), 'bench-shards-'));
const recordsDir = join(logDir, 'records');
const shards = new Map<string, ControllerProcess>();
let registered: Awaited<ReturnType<typeof registeredWebhook>> | undefined;

async function startShard(name: string): Promise<ControllerProcess> {
  const creds = await cp.serviceAccountCredentials(SYS, 'staticsite-controller');
  const kubeconfig = await cp.writeKubeconfig(`shards-${name}.kubeconfig`, creds, name);
  const shard = await startShardController({
    controlPlane: cp,
    name,
    kubeconfig,
    logDir,
    namespace: NS,
    system: SYS,
    recordsDir,
    args: [
      ...['--log-level', 'info', '--workers', String(WORKERS)],
      ...['--kube-api-qps', String(QPS), '--kube-api-burst', String(QPS * 2)],
    ],
  });
  shards.set(name, shard);
  await eventually(`${name} /readyz`, async () => (await shard.probe('/readyz')) === 200, 120_000, 200);
  return shard;
}

function reconciledOn(site: Site, shard: string, maps: Map<string, ConfigMap>): boolean {
  const ready = site.status?.conditions?.find((c) => c.type === 'Ready');
  return (
    site.metadata.labels?.[DRAIN_LABEL] === undefined &&
    ready?.observedGeneration === site.metadata.generation &&
    maps.get(site.metadata.name)?.metadata.labels?.[SHARD_LABEL] === shard
  );
}

/** Polls until every site is reconciled on one of `live`; the seconds since `started` and the sites. */
async function settledOn(live: string[], started: number, what: string) {
  let sites: Site[] = [];
  let left = SITES;
  await eventually(
    what,
    async () => {
      sites = (await cp.admin.must<{ items: Site[] }>('GET', SITES_PATH)).items;
      const maps = new Map(
        (await cp.admin.must<{ items: ConfigMap[] }>('GET', CONFIGMAPS)).items.map((m) => [m.metadata.name, m]),
      );
      left = sites.filter((s) => {
        const shard = s.metadata.labels?.[SHARD_LABEL] ?? '';
        return !live.includes(shard) || !reconciledOn(s, shard, maps);
      }).length;
      return sites.length === SITES && left === 0;
    },
    60 * 60_000,
    Math.max(2000, SITES / 2),
  ).catch((error) => {
    log(`${left} of ${SITES} not yet settled on ${live.join(', ')}`);
    throw error;
  });
  return { seconds: +((performance.now() - started) / 1000).toFixed(1), sites };
}

async function replicaFigures() {
  const figures: Record<string, unknown> = {};
  for (const [name, shard] of shards) {
    figures[name] = {
      rssMiB: mib(await currentRss(shard.process.pid)),
      peakRssMiB: mib(await peakRss(shard.process.pid)),
      heapUsedMiB: mib(await shard.metric('nodejs_heap_size_used_bytes')),
      reconciles: await shard.metric('controller_runtime_reconcile_total'),
      leader: (await shard.metric('leader_election_master_status', { name: 'staticsite-controller' })) === 1,
    };
  }
  return figures;
}

try {
  await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
  await cp.ensureNamespace(NS);
  await applyRbac(cp, SYS, RBAC_FILES);
  registered = await registeredWebhook(cp, {
    system: SYS,
    sites: NS,
    configName: WEBHOOK_CONFIG,
    args: ['--shard-leases-namespace', SYS],
  });
  for (const name of ['shard-a', 'shard-b', 'shard-c']) await startShard(name);
  await sleep(5000); // the webhook's ring sees all three Leases
  const idle = Object.fromEntries(
    await Promise.all([...shards].map(async ([n, s]) => [n, mib(await currentRss(s.process.pid))] as const)),
  );

  log(`creating ${SITES} sites through the webhook on 3 shards`);
  const started = performance.now();
  const names = Array.from({ length: SITES }, (_, i) => `site-${String(i).padStart(5, '0')}`);
  let createRetries = 0;
  await pool(names, 32, async (name) => {
    createRetries += await createRetrying(cp.admin, SITES_PATH, {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name, namespace: NS },
      spec: { content: `<h1>${name}</h1>`, replicas: 1 },
    });
  });
  const createSeconds = +((performance.now() - started) / 1000).toFixed(1);
  const first = await settledOn(['shard-a', 'shard-b', 'shard-c'], started, 'every site reconciled on 3 shards');
  const readyCheck = (s: Site) =>
    s.status?.observedGeneration === s.metadata.generation &&
    (s.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false);
  await eventually(
    'every site Ready',
    async () => (await cp.admin.must<{ items: Site[] }>('GET', SITES_PATH)).items.filter(readyCheck).length === SITES,
    60 * 60_000,
    Math.max(2000, SITES / 2),
  );
  const readySeconds = +((performance.now() - started) / 1000).toFixed(1);
  log(`reconciled after ${first.seconds} s, all Ready after ${readySeconds} s; settling ${SETTLED_SECONDS} s`);
  await sleep(SETTLED_SECONDS * 1000);
  const settled = await replicaFigures();
  const firstPerShard = sitesPerShard(first.sites);

  log('kill -9 shard-b');
  const orphans = first.sites.filter((s) => s.metadata.labels?.[SHARD_LABEL] === 'shard-b').length;
  const killedAt = performance.now();
  await (shards.get('shard-b') as ControllerProcess).kill();
  shards.delete('shard-b');
  const afterKill = await settledOn(['shard-a', 'shard-c'], killedAt, 'the killed shard’s sites reconciled elsewhere');
  const movedOnKill = afterKill.sites.filter(
    (s) =>
      first.sites.find((b) => b.metadata.name === s.metadata.name)?.metadata.labels?.[SHARD_LABEL] !==
      s.metadata.labels?.[SHARD_LABEL],
  ).length;

  log('a fourth shard joins');
  const joinedAt = performance.now();
  await startShard('shard-d');
  const afterJoin = await settledOn(['shard-a', 'shard-c', 'shard-d'], joinedAt, 'sites drained to the fourth shard');
  const movedOnJoin = afterJoin.sites.filter(
    (s) =>
      afterKill.sites.find((b) => b.metadata.name === s.metadata.name)?.metadata.labels?.[SHARD_LABEL] !==
      s.metadata.labels?.[SHARD_LABEL],
  ).length;
  let handOvers = 0;
  for (const name of ['shard-a', 'shard-c']) {
    const text = await readFile(join(logDir, `controller-${name}.log`), 'utf8');
    handOvers += text.split('\n').filter((line) => line.includes('handed a drained site over')).length;
  }

  console.log(
    JSON.stringify(
      {
        ...(await runHeader({ sites: SITES, workers: WORKERS, qps: QPS, controllerManagerQps: KCM_QPS })),
        createSeconds,
        createRetries,
        reconciledSeconds: first.seconds,
        readySeconds,
        sitesPerShard: firstPerShard,
        idleRssMiB: idle,
        settled,
        kill: {
          orphans,
          reconciledElsewhereSeconds: afterKill.seconds,
          moved: movedOnKill,
          sitesPerShard: sitesPerShard(afterKill.sites),
        },
        join: {
          rebalancedSeconds: afterJoin.seconds,
          moved: movedOnJoin,
          handOvers,
          sitesPerShard: sitesPerShard(afterJoin.sites),
        },
        afterJoin: await replicaFigures(),
      },
      null,
      2,
    ),
  );
} finally {
  for (const shard of shards.values()) await shard.stop();
  await registered?.stop();
  await nodes.stop();
  await cp.stop();
  await rm(logDir, { recursive: true, force: true });
}
