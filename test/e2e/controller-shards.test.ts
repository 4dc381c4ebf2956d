/**
 * The shard drills on the real control plane: three `staticsite controller --sharded` processes (the
 * built CLI, each through its own recording proxy) and the built webhook with
 * `--shard-leases-namespace`, under the RBAC of manifests/controller, manifests/webhook and
 * manifests/overlays/sharded. 300 sites are spread by the webhook at admission; one shard is killed
 * with SIGKILL and its sites move to the live ones; a fourth joins and sites are drained to it. From
 * the proxies' records: no site's children or status were ever written by two shards in overlapping
 * spans of time, and none is lost.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildCrd, CRD_NAME, DRAIN_LABEL, SHARD_LABEL } from '../../api/index.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { type LoopbackCerts, loopbackCerts } from '../../devenv/webhook-certs.ts';
import { MUTATING_CONFIGS, webhookConfigurations } from '../../devenv/webhook-configs.ts';
import { WebhookProcess } from '../../devenv/webhook-process.ts';
import { ApiProxy } from '../support/controller-api-proxy.ts';
import {
  applyControllerRbac,
  type ControllerProcess,
  credentialsVia,
  removeControllerRbac,
} from '../support/controller-harness.ts';
import { sitesPerShard, startShardController } from '../support/shards.ts';
import { testCluster } from '../support/shared.ts';

const NS = 'shards';
const SYS = 'shards-system';
const SITE_COUNT = 300;
const SITES = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
const CONFIGMAPS = `/api/v1/namespaces/${NS}/configmaps?labelSelector=app.kubernetes.io%2Fmanaged-by%3Dstaticsite-controller`;
const LEASE_SECONDS = 4;
const WEBHOOK_CONFIG = 'staticsite-shards';
const repoRoot = new URL('../../', import.meta.url).pathname;
/** The cluster-scoped and staticsite-system objects of these files get the test's namespace. */
const RBAC_FILES = ['manifests/webhook/webhook-rbac.yaml', 'manifests/overlays/sharded/shard-leases-rbac.yaml'];

interface Site {
  metadata: {
    name: string;
    generation: number;
    labels?: Record<string, string>;
    finalizers?: string[];
  };
  spec: { content: string };
  status?: { conditions?: Array<{ type: string; observedGeneration?: number }> };
}

/**
 * The controller has reconciled this generation: its Ready condition says so, whether or not the
 * pods are ready yet (kube-controller-manager, at its default 20 QPS, takes about a minute to
 * create 300 sites' ReplicaSets and pods, which no shard decides).
 */
function reconciled(site: Site): boolean {
  const ready = site.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.observedGeneration === site.metadata.generation;
}

interface ConfigMap {
  metadata: { name: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

/** One shard process and the proxy that records its requests. */
interface Shard {
  name: string;
  proxy: ApiProxy;
  process: ControllerProcess;
}

async function rbacText(file: string): Promise<string> {
  return (await readFile(join(repoRoot, file), 'utf8')).replaceAll('namespace: staticsite-system', `namespace: ${SYS}`);
}

/** Spans of reconcile writes (children created or updated, status written) per site, for one shard. */
function reconcileSpans(proxy: ApiProxy): Map<string, { first: number; last: number }> {
  const spans = new Map<string, { first: number; last: number }>();
  const child = new RegExp(
    `^/(?:api/v1|apis/apps/v1)/namespaces/${NS}/(?:configmaps|services|deployments)(?:/([^/]+))?$`,
  );
  const status = new RegExp(`^/apis/staticsite\\.dev/v1/namespaces/${NS}/staticsites/([^/]+)/status$`);
  for (const r of proxy.writes()) {
    const name = child.exec(r.path)?.[1] ?? (child.test(r.path) ? r.name : undefined) ?? status.exec(r.path)?.[1];
    if (!name) continue;
    const span = spans.get(name);
    if (span) span.last = Math.max(span.last, r.at);
    else spans.set(name, { first: r.at, last: r.at });
  }
  return spans;
}

describe('e2e: sharded controllers (a Lease per replica, the ring, the drain hand-over)', function () {
  this.timeout(600_000);
  let cp: ControlPlane;
  let certs: LoopbackCerts;
  let webhook: WebhookProcess;
  let logDir: string;
  let recordsDir: string;
  const shards = new Map<string, Shard>();

  async function startShard(name: string): Promise<Shard> {
    const proxy = new ApiProxy(cp.apiServerUrl, cp.certificateAuthority);
    await proxy.start();
    const creds = await cp.serviceAccountCredentials(SYS, 'staticsite-controller');
    const kubeconfig = await cp.writeKubeconfig(`shards-${name}.kubeconfig`, credentialsVia(proxy.url, creds), name);
    const process = await startShardController({
      controlPlane: cp,
      name,
      kubeconfig,
      logDir,
      namespace: NS,
      system: SYS,
      recordsDir,
      args: [
        `--leader-elect-lease-duration=${LEASE_SECONDS}s`,
        '--leader-elect-renew-deadline=3s',
        '--leader-elect-retry-period=1s',
        '--kube-api-qps=0',
        '--workers=8',
      ],
    });
    const shard = { name, proxy, process };
    shards.set(name, shard);
    await eventually(`${name} /readyz`, async () => (await process.probe('/readyz')) === 200, 60_000);
    return shard;
  }

  async function sites(): Promise<Site[]> {
    return (await cp.admin.must<{ items: Site[] }>('GET', SITES)).items;
  }

  async function configMaps(): Promise<Map<string, ConfigMap>> {
    const list = await cp.admin.must<{ items: ConfigMap[] }>('GET', CONFIGMAPS);
    return new Map(list.items.map((c) => [c.metadata.name, c]));
  }

  /** Every site labelled with one of `live` (each of which has some), not draining, reconciled (its Ready condition) and its ConfigMap labelled with its shard. */
  async function settledOn(live: string[]): Promise<Site[]> {
    let last = '';
    try {
      return await eventually(
        `every site reconciled by one of ${live.join(', ')}`,
        async () => {
          const [all, maps] = [await sites(), await configMaps()];
          const unsettled = all.filter((s) => {
            const shard = s.metadata.labels?.[SHARD_LABEL] ?? '';
            const map = maps.get(s.metadata.name);
            return (
              !live.includes(shard) ||
              s.metadata.labels?.[DRAIN_LABEL] !== undefined ||
              !reconciled(s) ||
              map?.metadata.labels?.[SHARD_LABEL] !== shard ||
              map.data?.['index.html'] !== s.spec.content
            );
          });
          last = unsettled
            .slice(0, 3)
            .map((s) => `${s.metadata.name} ${JSON.stringify(s.metadata.labels)}`)
            .join('; ');
          const holding = new Set(all.map((s) => s.metadata.labels?.[SHARD_LABEL]));
          const idle = live.filter((shard) => !holding.has(shard));
          if (idle.length > 0) last = `no site on ${idle.join(', ')} yet`;
          return all.length === SITE_COUNT && unsettled.length === 0 && idle.length === 0 ? all : undefined;
        },
        120_000,
        500,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; for example: ${last}`);
    }
  }

  /** No site's reconcile writes came from two shards in overlapping spans of time. */
  function expectNoOverlap(): void {
    const spans = [...shards.values()].map((s) => ({ shard: s.name, spans: reconcileSpans(s.proxy) }));
    const overlaps: string[] = [];
    for (let i = 0; i < spans.length; i++) {
      for (let j = i + 1; j < spans.length; j++) {
        const [a, b] = [spans[i], spans[j]] as [(typeof spans)[0], (typeof spans)[0]];
        for (const [site, x] of a.spans) {
          const y = b.spans.get(site);
          if (y && x.first <= y.last && y.first <= x.last) overlaps.push(`${site}: ${a.shard} and ${b.shard}`);
        }
      }
    }
    expect(overlaps).to.deep.equal([]);
  }

  before(async function () {
    this.timeout(300_000);
    ({ controlPlane: cp } = await testCluster());
    await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
    await cp.ensureNamespace(NS);
    await applyControllerRbac(cp, SYS);
    for (const file of RBAC_FILES) {
      const applied = await cp.kubectl(['apply', '-f', '-'], await rbacText(file));
      if (applied.code !== 0) throw new Error(`kubectl apply ${file}: ${applied.stderr}`);
    }
    logDir = await mkdtemp(join(tmpdir(), 'shards-logs-'));
    recordsDir = await mkdtemp(join(tmpdir(), 'shards-records-'));
    certs = await loopbackCerts();
    const webhookCreds = await cp.serviceAccountCredentials(SYS, 'staticsite-webhook');
    webhook = await WebhookProcess.start({
      certDir: certs.dir,
      kubeconfig: await cp.writeKubeconfig('shards-webhook.kubeconfig', webhookCreds, 'webhook'),
      args: ['--shard-leases-namespace', SYS],
    });
    const { mutating } = webhookConfigurations(webhook.url, certs.caBundle, WEBHOOK_CONFIG);
    for (const hook of mutating.webhooks) {
      Object.assign(hook, { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } } });
    }
    await cp.admin.must('POST', MUTATING_CONFIGS, mutating);
    for (const name of ['shard-a', 'shard-b', 'shard-c']) await startShard(name);
    // The webhook's ring has all three once a dry-run create is labelled; configurations apply asynchronously.
    const seen = new Set<string>();
    await eventually('the webhook labels sites from three live shards', async () => {
      for (let i = 0; i < 20; i++) {
        const probe = {
          apiVersion: 'staticsite.dev/v1',
          kind: 'StaticSite',
          metadata: { name: `probe-${i}` },
          spec: { content: 'x' },
        };
        const res = await cp.admin.post<Site>(SITES, probe, { query: { dryRun: 'All' } });
        const shard = res.body.metadata?.labels?.[SHARD_LABEL];
        if (shard) seen.add(shard);
      }
      return seen.size === 3;
    });
  });

  after(async function () {
    this.timeout(120_000);
    for (const shard of shards.values()) {
      await shard.process.stop();
      await shard.proxy.stop();
    }
    await cp.admin.delete(`${MUTATING_CONFIGS}/${WEBHOOK_CONFIG}`);
    await webhook?.stop();
    for (const s of (await cp.admin.get<{ items?: Site[] }>(SITES)).body.items ?? []) {
      await cp.admin.patch(`${SITES}/${s.metadata.name}`, { metadata: { finalizers: null } });
    }
    await cp.admin.delete(`/api/v1/namespaces/${NS}`);
    await uninstallCrd(cp.admin, CRD_NAME);
    for (const file of RBAC_FILES) await cp.kubectl(['delete', '--ignore-not-found', '-f', '-'], await rbacText(file));
    await removeControllerRbac(cp, SYS);
    await rm(recordsDir, { recursive: true, force: true });
    if (!process.env.KEEP_CONTROLLER_LOGS) await rm(logDir, { recursive: true, force: true });
  });

  it(`3 shards: the webhook labels ${SITE_COUNT} sites at admission, about a third each; each shard watches and writes only its own`, async () => {
    const created = new Map<string, string>();
    // Ten writers at once, as a busy cluster's users would be.
    let next = 0;
    const writer = async () => {
      while (next < SITE_COUNT) {
        const i = next++;
        const site = {
          apiVersion: 'staticsite.dev/v1',
          kind: 'StaticSite',
          metadata: { name: `site-${i}` },
          spec: { content: `<p>${i}</p>` },
        };
        const res = await cp.admin.must<Site>('POST', SITES, site);
        created.set(res.metadata.name, res.metadata.labels?.[SHARD_LABEL] ?? '');
      }
    };
    await Promise.all(Array.from({ length: 10 }, writer));
    // Labelled in the create itself, by the webhook: no later move was needed.
    const byShard = sitesPerShard(
      [...created.values()].map((shard) => ({ metadata: { labels: { [SHARD_LABEL]: shard } } }) as unknown as Site),
    );
    expect(Object.keys(byShard).sort()).to.deep.equal(['shard-a', 'shard-b', 'shard-c']);
    for (const n of Object.values(byShard)) expect(n).to.be.within(SITE_COUNT * 0.2, SITE_COUNT * 0.47);
    const settled = await settledOn(['shard-a', 'shard-b', 'shard-c']);
    for (const s of settled)
      expect(s.metadata.labels?.[SHARD_LABEL], s.metadata.name).to.equal(created.get(s.metadata.name));
    const leaders: string[] = [];
    for (const shard of shards.values()) {
      if ((await shard.process.metric('leader_election_master_status', { name: 'staticsite-controller' })) === 1) {
        leaders.push(shard.name);
      }
    }
    expect(leaders).to.have.length(1);
    for (const shard of shards.values()) {
      // Its informer asks the API server for its own label; only the leader's sharder lists every site.
      const watched = shard.proxy.requests.filter((r) => r.path === SITES && r.method === 'GET');
      const selectors = new Set(watched.map((r) => r.query.get('labelSelector') ?? '(none)'));
      expect([...selectors].sort(), shard.name).to.deep.equal(
        leaders.includes(shard.name) ? ['(none)', `${SHARD_LABEL}=${shard.name}`] : [`${SHARD_LABEL}=${shard.name}`],
      );
      // It wrote the children and status of its own sites only.
      const own = new Set(
        settled.filter((s) => s.metadata.labels?.[SHARD_LABEL] === shard.name).map((s) => s.metadata.name),
      );
      const foreign = [...reconcileSpans(shard.proxy).keys()].filter((name) => !own.has(name));
      expect(foreign, shard.name).to.deep.equal([]);
    }
  });

  it('kill -9 one shard: its sites are reconciled by the live shards within the lease duration plus a pass, none by two at once, none lost', async () => {
    const before = await sites();
    const orphans = before.filter((s) => s.metadata.labels?.[SHARD_LABEL] === 'shard-b').map((s) => s.metadata.name);
    expect(orphans.length).to.be.above(0);
    const killedAt = Date.now();
    await (shards.get('shard-b') as Shard).process.kill();
    const after = await settledOn(['shard-a', 'shard-c']);
    const tookMs = Date.now() - killedAt;
    console.log(
      `      ${orphans.length} sites of the killed shard reconciled elsewhere ${(tookMs / 1000).toFixed(1)} s after SIGKILL`,
    );
    expect(tookMs).to.be.below(LEASE_SECONDS * 1000 + 60_000);
    expect(after.map((s) => s.metadata.name).sort()).to.deep.equal(before.map((s) => s.metadata.name).sort());
    // Only the killed shard's sites moved.
    const moved = after.filter(
      (s) =>
        before.find((b) => b.metadata.name === s.metadata.name)?.metadata.labels?.[SHARD_LABEL] !==
        s.metadata.labels?.[SHARD_LABEL],
    );
    expect(moved.map((s) => s.metadata.name).sort()).to.deep.equal([...orphans].sort());
    expectNoOverlap();
  });

  it('a fourth shard joins: sites are drained to it and handed over, about a quarter, none by two at once; it reconciles their edits', async () => {
    const before = await sites();
    await startShard('shard-d');
    const after = await settledOn(['shard-a', 'shard-c', 'shard-d']);
    const toD = after.filter((s) => s.metadata.labels?.[SHARD_LABEL] === 'shard-d');
    expect(toD.length).to.be.within(SITE_COUNT * 0.15, SITE_COUNT * 0.5);
    // The shard that had each one let it go itself, after the drain (its log says so).
    const handedOver = new Set<string>();
    for (const shard of ['shard-a', 'shard-c']) {
      for (const line of (await readFile(join(logDir, `controller-${shard}.log`), 'utf8')).split('\n')) {
        if (!line.includes('handed a drained site over')) continue;
        const entry = JSON.parse(line) as { site: string; shard: string };
        const was = before.find((b) => `${NS}/${b.metadata.name}` === entry.site)?.metadata.labels?.[SHARD_LABEL];
        expect(entry.shard, entry.site).to.equal(was);
        handedOver.add(entry.site);
      }
    }
    expect([...handedOver].sort()).to.deep.equal(toD.map((s) => `${NS}/${s.metadata.name}`).sort());
    // No other site moved.
    const moved = after.filter(
      (s) =>
        before.find((b) => b.metadata.name === s.metadata.name)?.metadata.labels?.[SHARD_LABEL] !==
        s.metadata.labels?.[SHARD_LABEL],
    );
    expect(moved.map((s) => s.metadata.name).sort()).to.deep.equal(toD.map((s) => s.metadata.name).sort());
    expectNoOverlap();
    // The new shard reconciles edits of its sites.
    const edited = toD.slice(0, 5);
    for (const s of edited)
      await cp.admin.must(
        'PATCH',
        `${SITES}/${s.metadata.name}`,
        { spec: { content: '<p>edited</p>' } },
        { contentType: 'application/merge-patch+json' },
      );
    await settledOn(['shard-a', 'shard-c', 'shard-d']);
    const d = shards.get('shard-d') as Shard;
    for (const s of edited) {
      expect(
        d.proxy.writes((r) => r.method === 'PUT' && r.path.endsWith(`/configmaps/${s.metadata.name}`)).length,
        s.metadata.name,
      ).to.be.above(0);
    }
  });
});
