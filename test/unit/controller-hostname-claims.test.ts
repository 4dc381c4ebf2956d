import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { pino } from 'pino';
import { FINALIZER, type StaticSiteV1 } from '../../api/index.ts';
import { CHILDREN } from '../../controller/child-registry.ts';
import {
  CLAIM_HOSTNAME_ANNOTATION,
  CLAIM_SITE_ANNOTATION,
  CLAIM_SITE_UID_ANNOTATION,
  claimName,
  HostnameClaims,
} from '../../controller/claims/hostname-claims.ts';
import { EventHandlers } from '../../controller/event-handlers.ts';
import { MemoryEventRecorder } from '../../controller/observability/events.ts';
import type { ChildLookup } from '../../controller/reconcile/ensure.ts';
import { type ReconcilerConfig, SiteReconciler } from '../../controller/reconcile/reconciler.ts';
import type { ExternalRecord, RecordStore } from '../../controller/records/record-store.ts';
import { KubeApi } from '../../kube/api-client.ts';
import type { KubeObject, Lease } from '../../kube/objects.ts';
import { collectionPath } from '../../kube/resources.ts';
import { FakeApiServer, ManualClock } from '../support/kube/index.ts';

const NS = 'web';
const SYS = 'staticsite-system';
const SITES = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;
const CLAIMS = `/apis/coordination.k8s.io/v1/namespaces/${SYS}/leases`;
const HOST = 'shop.example.com';

class MemoryRecords implements RecordStore {
  readonly records = new Map<string, ExternalRecord>();
  async publish(key: string, record: ExternalRecord) {
    const before = this.records.get(key);
    this.records.set(key, record);
    if (!before) return 'created' as const;
    return JSON.stringify(before) === JSON.stringify(record) ? ('unchanged' as const) : ('updated' as const);
  }
  async remove(key: string) {
    return this.records.delete(key) ? ('removed' as const) : ('absent' as const);
  }
}

function lookup<T extends KubeObject>(server: FakeApiServer, collection: string): ChildLookup<T> {
  return { get: (key) => server.read<T>(collection, key.split('/')[1] ?? '') };
}

describe('controller: hostname claims', () => {
  let server: FakeApiServer;
  let records: MemoryRecords;
  let events: MemoryEventRecorder;
  let logLines: string[];

  function reconciler(config: Partial<ReconcilerConfig> = {}): SiteReconciler {
    return new SiteReconciler({
      api: new KubeApi(server),
      children: CHILDREN.map((kind) => ({ kind, cache: lookup(server, collectionPath(kind.type, NS)) })),
      records,
      claims: new HostnameClaims({
        api: new KubeApi(server),
        namespace: SYS,
        cache: {
          get: (key) => server.read<Lease>(CLAIMS, key.split('/')[1] ?? ''),
          list: () => server.list<Lease>(CLAIMS),
        },
      }),
      events,
      clock: new ManualClock(),
      logger: pino({ level: 'info' }, { write: (line: string) => logLines.push(line) }),
      config: { image: 'nginx:test', baseDomain: 'sites.test', ...config },
    });
  }

  const seedSite = (name: string, hostname = HOST, namespace = NS) =>
    server.seed<StaticSiteV1>(`/apis/staticsite.dev/v1/namespaces/${namespace}/staticsites`, {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name, namespace },
      spec: { content: name, replicas: 1, hostname },
    });
  const site = (name: string) => server.read<StaticSiteV1>(SITES, name) as StaticSiteV1;
  const ready = (name: string) => site(name).status?.conditions?.find((c) => c.type === 'Ready');
  const claims = () => server.list<Lease>(CLAIMS);
  const warnings = (reason: string) =>
    events.events.filter((e) => e.type === 'Warning' && e.reason === reason).map((e) => `${e.object}: ${e.message}`);

  beforeEach(() => {
    server = new FakeApiServer();
    records = new MemoryRecords();
    events = new MemoryEventRecorder();
    logLines = [];
  });

  it('names the claim after the hostname: hostname- and the first 40 hex digits of its SHA-256', () => {
    const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(long).to.have.length(253);
    const hex = createHash('sha256').update(long).digest('hex').slice(0, 40);
    expect(claimName(long)).to.equal(`hostname-${hex}`);
    expect(claimName(long)).to.have.length(49);
    expect(claimName(HOST)).to.not.equal(claimName(`${HOST}.`));
  });

  it('the first site claims the hostname with a create-only Lease naming the site, then publishes', async () => {
    seedSite('shop');
    await reconciler().reconcile(`${NS}/shop`);
    const [claim, ...more] = claims();
    expect(more).to.deep.equal([]);
    expect(claim?.metadata.name).to.equal(claimName(HOST));
    expect(claim?.metadata.labels).to.deep.equal({
      'app.kubernetes.io/managed-by': 'staticsite-controller',
      'staticsite.dev/claim': 'hostname',
    });
    expect(claim?.metadata.annotations).to.deep.equal({
      [CLAIM_HOSTNAME_ANNOTATION]: HOST,
      [CLAIM_SITE_ANNOTATION]: 'web/shop',
      [CLAIM_SITE_UID_ANNOTATION]: site('shop').metadata.uid,
    });
    expect(claim?.spec).to.deep.equal({ holderIdentity: 'web/shop' });
    expect(records.records.get(`${NS}/shop`)?.hostname).to.equal(HOST);
    // Claimed before published: the POST of the claim comes before the status write.
    const writes = server.writes().map((r) => `${r.method} ${r.path}`);
    expect(writes.indexOf(`POST ${CLAIMS}`)).to.be.lessThan(writes.indexOf(`PUT ${SITES}/shop/status`));
  });

  it('a resync of the holder costs no claim request (the cache shows its claim)', async () => {
    seedSite('shop');
    const r = reconciler();
    await r.reconcile(`${NS}/shop`);
    const before = server.requests.length;
    await r.reconcile(`${NS}/shop`);
    const claimRequests = server.requests.slice(before).filter((q) => q.path.startsWith(CLAIMS));
    expect(claimRequests).to.deep.equal([]);
  });

  it('20 concurrent reconciles of one hostname: one claim, one record, 19 HostnameConflict with a Warning', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `site-${String(i).padStart(2, '0')}`);
    for (const name of names) seedSite(name);
    const r = reconciler();
    const outcomes = await Promise.allSettled(names.map((name) => r.reconcile(`${NS}/${name}`)));
    expect(outcomes.filter((o) => o.status === 'rejected')).to.deep.equal([]);
    expect(claims()).to.have.length(1);
    const holder = claims()[0]?.metadata.annotations?.[CLAIM_SITE_ANNOTATION] as string;
    expect([...records.records.keys()]).to.deep.equal([holder]);
    const losers = names.filter((n) => `${NS}/${n}` !== holder);
    expect(losers).to.have.length(19);
    for (const name of losers) {
      expect(ready(name)).to.include({
        status: 'False',
        reason: 'HostnameConflict',
        message: `hostname ${HOST} is held by StaticSite ${holder}`,
      });
    }
    expect(warnings('HostnameConflict')).to.have.members(
      losers.map((n) => `${NS}/${n}: hostname ${HOST} is held by StaticSite ${holder}`),
    );
  });

  it('a loser that had a record (from before claims, or an older hostname) loses it', async () => {
    seedSite('shop');
    seedSite('copy');
    await records.publish(`${NS}/copy`, {
      hostname: HOST,
      service: 'copy.web.svc.cluster.local',
      port: 80,
      site: 'web/copy',
    });
    const r = reconciler();
    await r.reconcile(`${NS}/shop`);
    await r.reconcile(`${NS}/copy`);
    expect([...records.records.keys()]).to.deep.equal([`${NS}/shop`]);
    expect(ready('copy')?.reason).to.equal('HostnameConflict');
    expect(events.events.filter((e) => e.object === 'web/copy' && e.reason === 'RecordRemoved')).to.have.length(1);
  });

  it('a stale claim (its site is gone) is deleted with uid and resourceVersion preconditions, then claimed', async () => {
    const stale = server.seed<Lease>(CLAIMS, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: claimName(HOST),
        namespace: SYS,
        annotations: {
          [CLAIM_HOSTNAME_ANNOTATION]: HOST,
          [CLAIM_SITE_ANNOTATION]: 'web/gone',
          [CLAIM_SITE_UID_ANNOTATION]: 'uid-of-gone',
        },
      },
      spec: { holderIdentity: 'web/gone' },
    });
    seedSite('shop');
    await reconciler().reconcile(`${NS}/shop`);
    const del = server.requests.find((q) => q.method === 'DELETE');
    expect(del?.path).to.equal(`${CLAIMS}/${claimName(HOST)}`);
    expect(del?.body).to.deep.equal({
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      preconditions: { uid: stale.metadata.uid, resourceVersion: stale.metadata.resourceVersion },
    });
    const claimCalls = server.requests.filter((q) => q.path.startsWith(CLAIMS)).map((q) => q.method);
    expect(claimCalls).to.deep.equal(['POST', 'GET', 'DELETE', 'POST']);
    expect(claims()[0]?.metadata.annotations?.[CLAIM_SITE_ANNOTATION]).to.equal('web/shop');
    expect(records.records.get(`${NS}/shop`)?.hostname).to.equal(HOST);
  });

  it('a claim held by a site of the same name but another uid (deleted and re-created) is stale too', async () => {
    seedSite('shop');
    const r = reconciler();
    await r.reconcile(`${NS}/shop`);
    // Force-deleted (finalizer removed by hand, controller away), then re-created under the same name.
    server.remove(SITES, 'shop');
    records.records.clear();
    // (the garbage collector's part: the old site's children go)
    server.remove(`/api/v1/namespaces/${NS}/configmaps`, 'shop');
    server.remove(`/apis/apps/v1/namespaces/${NS}/deployments`, 'shop');
    server.remove(`/api/v1/namespaces/${NS}/services`, 'shop');
    seedSite('shop');
    await r.reconcile(`${NS}/shop`);
    expect(claims()[0]?.metadata.annotations?.[CLAIM_SITE_UID_ANNOTATION]).to.equal(site('shop').metadata.uid);
    expect(ready('shop')?.reason).to.not.equal('HostnameConflict');
  });

  it('a stale claim changed after it was read is not deleted: the precondition fails (409), nothing is lost', async () => {
    seedSite('shop');
    await reconciler().reconcile(`${NS}/shop`);
    const claim = claims()[0] as Lease;
    server.modify<Lease>(CLAIMS, claimName(HOST), (l) => {
      l.metadata.labels = { ...l.metadata.labels, touched: 'yes' };
    });
    const api = new KubeApi(server);
    expect(await new HostnameClaims({ api, namespace: SYS }).deleteClaim(claim)).to.equal(false);
    expect(claims()).to.have.length(1);
    const answer = await server.request('DELETE', `${CLAIMS}/${claimName(HOST)}`, {
      body: { preconditions: { uid: 'another-uid' } },
    });
    expect(answer.status).to.equal(409);
    // kube-apiserver v1.37's words for a failed uid precondition (measured on the real server).
    expect((answer.body as { message: string; reason: string }).message).to.equal(
      `Operation cannot be fulfilled on Lease.coordination.k8s.io "${claimName(HOST)}": the UID in the precondition (another-uid) does not match the UID in record (${claim.metadata.uid}). The object might have been deleted and then recreated`,
    );
  });

  it('a holder the controller may not read (403, one-namespace RBAC) counts as alive: never taken on a guess', async () => {
    seedSite('shop');
    seedSite('copy');
    const r = reconciler();
    await r.reconcile(`${NS}/shop`);
    server.failNext((q) => q.method === 'GET' && q.path === `${SITES}/shop`, { status: 403, reason: 'Forbidden' });
    await r.reconcile(`${NS}/copy`);
    expect(ready('copy')?.reason).to.equal('HostnameConflict');
    expect([...records.records.keys()]).to.deep.equal([`${NS}/shop`]);
  });

  it('deleting the holder: record deleted, then the claim released (uid precondition), then the finalizer; the loser takes over', async () => {
    seedSite('shop');
    seedSite('copy');
    const r = reconciler();
    await r.reconcile(`${NS}/shop`);
    await r.reconcile(`${NS}/copy`);
    const claim = claims()[0] as Lease;
    server.modify<StaticSiteV1>(SITES, 'shop', (s) => {
      s.metadata.deletionTimestamp = '2026-11-29T12:10:00Z';
    });
    const mark = server.requests.length;
    await r.reconcile(`${NS}/shop`);
    const calls = server.requests
      .slice(mark)
      .filter((q) => q.method !== 'GET')
      .map((q) => `${q.method} ${q.path}`);
    expect(calls).to.deep.equal([`DELETE ${CLAIMS}/${claimName(HOST)}`, `PUT ${SITES}/shop`]);
    const del = server.requests.slice(mark).find((q) => q.method === 'DELETE');
    expect((del?.body as { preconditions?: unknown } | undefined)?.preconditions).to.deep.equal({
      uid: claim.metadata.uid,
      resourceVersion: claim.metadata.resourceVersion,
    });
    expect(server.read(SITES, 'shop')).to.equal(undefined);
    expect(claims()).to.deep.equal([]);
    expect(events.events.at(-1)).to.include({ reason: 'Finalized' });

    await r.reconcile(`${NS}/copy`);
    expect([...records.records.keys()]).to.deep.equal([`${NS}/copy`]);
    expect(claims()[0]?.metadata.annotations?.[CLAIM_SITE_ANNOTATION]).to.equal('web/copy');
    expect(ready('copy')?.reason).to.not.equal('HostnameConflict');
  });

  it('deleting a loser never touches the holder’s claim', async () => {
    seedSite('shop');
    seedSite('copy');
    const r = reconciler();
    await r.reconcile(`${NS}/shop`);
    await r.reconcile(`${NS}/copy`);
    server.modify<StaticSiteV1>(SITES, 'copy', (s) => {
      s.metadata.deletionTimestamp = '2026-11-29T12:10:00Z';
    });
    await r.reconcile(`${NS}/copy`);
    expect(server.read(SITES, 'copy')).to.equal(undefined);
    expect(server.requests.filter((q) => q.method === 'DELETE')).to.deep.equal([]);
    expect(claims()[0]?.metadata.annotations?.[CLAIM_SITE_ANNOTATION]).to.equal('web/shop');
  });

  it('a failed claim release keeps the finalizer, with a Warning, and is retried', async () => {
    seedSite('shop');
    const r = reconciler();
    await r.reconcile(`${NS}/shop`);
    server.modify<StaticSiteV1>(SITES, 'shop', (s) => {
      s.metadata.deletionTimestamp = '2026-11-29T12:10:00Z';
    });
    server.failNext((q) => q.method === 'DELETE', { status: 403, reason: 'Forbidden', message: 'forbidden' });
    const error = await r.reconcile(`${NS}/shop`).catch((e: unknown) => e);
    expect((error as { code?: number }).code).to.equal(403);
    expect(site('shop').metadata.finalizers).to.deep.equal([FINALIZER]);
    expect(warnings('ClaimReleaseFailed')).to.have.length(1);
    await r.reconcile(`${NS}/shop`);
    expect(server.read(SITES, 'shop')).to.equal(undefined);
    expect(claims()).to.deep.equal([]);
  });

  it('a hostname change claims the new hostname first, publishes it, then releases the old one', async () => {
    seedSite('shop');
    seedSite('waiting', 'new.example.com');
    seedSite('other', 'new.example.com');
    const r = reconciler();
    await r.reconcile(`${NS}/shop`);
    server.modify<StaticSiteV1>(SITES, 'shop', (s) => {
      s.spec.hostname = 'shop-v2.example.com';
    });
    const mark = server.requests.length;
    await r.reconcile(`${NS}/shop`);
    const calls = server.requests
      .slice(mark)
      .filter((q) => q.path.startsWith(CLAIMS) && q.method !== 'GET')
      .map((q) => `${q.method} ${q.path}`);
    expect(calls).to.deep.equal([`POST ${CLAIMS}`, `DELETE ${CLAIMS}/${claimName(HOST)}`]);
    expect(claims().map((c) => c.metadata.annotations?.[CLAIM_HOSTNAME_ANNOTATION])).to.deep.equal([
      'shop-v2.example.com',
    ]);
    expect(records.records.get(`${NS}/shop`)?.hostname).to.equal('shop-v2.example.com');
    // The old hostname is free for another site.
    seedSite('next');
    await r.reconcile(`${NS}/next`);
    expect(records.records.get(`${NS}/next`)?.hostname).to.equal(HOST);
  });

  it('a hostname change to a hostname held by another site: the site loses it and its old record goes', async () => {
    seedSite('shop');
    seedSite('blog', 'blog.example.com');
    const r = reconciler();
    await r.reconcile(`${NS}/shop`);
    await r.reconcile(`${NS}/blog`);
    server.modify<StaticSiteV1>(SITES, 'blog', (s) => {
      s.spec.hostname = HOST;
    });
    await r.reconcile(`${NS}/blog`);
    expect(records.records.has(`${NS}/blog`)).to.equal(false);
    expect(ready('blog')).to.include({
      reason: 'HostnameConflict',
      message: `hostname ${HOST} is held by StaticSite web/shop`,
    });
    // With its record gone, its claim on blog.example.com is released: free for another site.
    expect(claims().map((c) => c.metadata.annotations?.[CLAIM_HOSTNAME_ANNOTATION])).to.deep.equal([HOST]);
    seedSite('blog2', 'blog.example.com');
    await r.reconcile(`${NS}/blog2`);
    expect(records.records.get(`${NS}/blog2`)?.hostname).to.equal('blog.example.com');
  });

  it('a site that vanished (finalizer removed by hand) leaves no claim behind', async () => {
    seedSite('shop');
    const r = reconciler();
    await r.reconcile(`${NS}/shop`);
    server.remove(SITES, 'shop');
    await r.reconcile(`${NS}/shop`);
    expect(claims()).to.deep.equal([]);
    expect(records.records.size).to.equal(0);
  });

  it('the deletion of a claim queues every site that wants that hostname', () => {
    const keys: string[] = [];
    const h = new EventHandlers({ add: (key) => keys.push(key) }, { baseDomain: 'sites.test' });
    const sites: StaticSiteV1[] = [
      {
        apiVersion: 'staticsite.dev/v1',
        kind: 'StaticSite',
        metadata: { name: 'a', namespace: NS },
        spec: { content: 'a', hostname: HOST },
      },
      {
        apiVersion: 'staticsite.dev/v1',
        kind: 'StaticSite',
        metadata: { name: 'b', namespace: NS },
        spec: { content: 'b' },
      },
      {
        apiVersion: 'staticsite.dev/v1',
        kind: 'StaticSite',
        metadata: { name: 'c', namespace: 'blog' },
        spec: { content: 'c', hostname: HOST },
      },
    ];
    h.register({ sites: { onChange: () => {}, list: () => sites }, children: [] });
    const claim = new HostnameClaims({ api: new KubeApi(server), namespace: SYS }).claimFor(
      HOST,
      sites[0] as StaticSiteV1,
    );
    h.onClaimChange('add', claim);
    expect(keys).to.deep.equal([]);
    h.onClaimChange('delete', claim);
    expect(keys).to.deep.equal(['web/a', 'blog/c']);
    // A default hostname (<name>.<namespace>.<base domain>) counts too.
    h.onClaimChange('delete', {
      ...claim,
      metadata: { ...claim.metadata, annotations: { [CLAIM_HOSTNAME_ANNOTATION]: 'b.web.sites.test' } },
    });
    expect(keys).to.deep.equal(['web/a', 'blog/c', 'web/b']);
  });

  it('sites in an excluded namespace are left alone: no request at all, one info log per site', async () => {
    seedSite('shop', HOST, 'kube-system');
    const r = reconciler({ excludedNamespaces: ['kube-system', 'staticsite-system'] });
    const before = server.requests.length;
    for (let i = 0; i < 3; i++) await r.reconcile('kube-system/shop');
    await r.reconcile('staticsite-system/other');
    expect(server.requests.slice(before)).to.deep.equal([]);
    const logged = logLines.map((l) => JSON.parse(l) as { level: number; site: string; msg: string });
    expect(logged.map((l) => [l.level, l.site])).to.deep.equal([
      [30, 'kube-system/shop'],
      [30, 'staticsite-system/other'],
    ]);
    expect(logged[0]?.msg).to.equal('StaticSite in an excluded namespace (the webhooks skip it too): left alone');
    // Other namespaces are reconciled as ever.
    seedSite('shop');
    await r.reconcile(`${NS}/shop`);
    expect(records.records.has(`${NS}/shop`)).to.equal(true);
  });
});
