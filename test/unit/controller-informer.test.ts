import { expect } from 'chai';
import { silentLogger } from '../../controller/observability/logger.ts';
import { KubeApi } from '../../kube/api-client.ts';
import { type ChangeType, Informer } from '../../kube/informer.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { CONFIGMAPS } from '../../kube/resources.ts';
import { FakeApiServer, ManualClock, settle } from '../support/kube/index.ts';

const NS = 'ns';
const COLLECTION = `/api/v1/namespaces/${NS}/configmaps`;
const SELECTOR = 'app.kubernetes.io/managed-by=staticsite-controller';
const MANAGED_FIELDS = [{ manager: 'kubectl', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: {} }];

function cm(
  name: string,
  labels: Record<string, string> = { 'app.kubernetes.io/managed-by': 'staticsite-controller' },
) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, labels }, data: { k: name } };
}

describe('controller: informer', () => {
  let clock: ManualClock;
  let server: FakeApiServer;
  let informer: Informer<KubeObject>;
  let changes: Array<[ChangeType, string]>;

  const watches = () => server.requests.filter((r) => r.method === 'WATCH');
  const lists = () => server.requests.filter((r) => r.method === 'GET' && r.path === COLLECTION);

  beforeEach(async () => {
    clock = new ManualClock();
    server = new FakeApiServer();
    // 'a' is listed with managedFields, as the API server returns them.
    server.seed(COLLECTION, { ...cm('a'), metadata: { ...cm('a').metadata, managedFields: MANAGED_FIELDS } });
    server.seed(COLLECTION, cm('b'));
    server.seed(COLLECTION, cm('unrelated', {}));
    informer = new Informer({
      name: 'configmaps',
      api: new KubeApi(server),
      type: CONFIGMAPS,
      namespace: NS,
      labelSelector: SELECTOR,
      clock,
      logger: silentLogger(),
      watchTimeoutSeconds: () => 300,
      idleTimeoutMs: 150_000,
    });
    changes = [];
    informer.onChange((type, object) => changes.push([type, object.metadata.name ?? '']));
    informer.start();
    await informer.waitForSync();
    await settle();
  });

  afterEach(async () => {
    await informer.stop();
  });

  it('lists (filtered by label), then watches from the list resourceVersion with bookmarks', () => {
    expect(informer.keys().sort()).to.deep.equal(['ns/a', 'ns/b']);
    expect(changes).to.deep.equal([
      ['add', 'a'],
      ['add', 'b'],
    ]);
    expect(lists()[0]?.query).to.include({ labelSelector: SELECTOR });
    expect(watches()).to.have.length(1);
    expect(watches()[0]?.query).to.include({
      labelSelector: SELECTOR,
      resourceVersion: server.resourceVersion(),
      allowWatchBookmarks: true,
      timeoutSeconds: 300,
      watch: 1,
    });
    expect(informer.health()).to.include({ synced: true, watching: true, downForMs: 0 });
  });

  it('keeps objects without managedFields, from the list and from the watch (TransformStripManagedFields)', async () => {
    server.seed(COLLECTION, { ...cm('m'), metadata: { ...cm('m').metadata, managedFields: MANAGED_FIELDS } });
    await settle();
    expect(informer.get('ns/m')?.metadata).to.not.have.property('managedFields');
    expect(informer.get('ns/m')).to.include({ apiVersion: 'v1', kind: 'ConfigMap' });
    expect(informer.get('ns/a')?.metadata).to.not.have.property('managedFields');
    expect(informer.get('ns/a')?.metadata.name).to.equal('a');
  });

  it('applies watch events to the cache and reports them', async () => {
    server.seed(COLLECTION, cm('c'));
    server.modify(COLLECTION, 'a', (o: KubeObject & { data?: Record<string, string> }) => {
      o.data = { k: 'changed' };
    });
    server.remove(COLLECTION, 'b');
    await settle();
    expect(changes.slice(2)).to.deep.equal([
      ['add', 'c'],
      ['update', 'a'],
      ['delete', 'b'],
    ]);
    expect(informer.keys().sort()).to.deep.equal(['ns/a', 'ns/c']);
    expect((informer.get('ns/a') as KubeObject & { data: unknown }).data).to.deep.equal({ k: 'changed' });
  });

  it('resumes from the last bookmark after the server closes the watch', async () => {
    server.sendToWatches(COLLECTION, {
      type: 'BOOKMARK',
      object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '555' } },
    });
    await settle();
    server.closeWatches();
    await clock.advance(0);
    expect(watches()).to.have.length(2);
    expect(watches()[1]?.query?.resourceVersion).to.equal('555');
    expect(lists()).to.have.length(1);
  });

  it('relists on a 410 ERROR event and reports every key, vanished ones as deletions', async () => {
    // While the watch is gone, b vanishes and d appears: the informer can only learn it by relisting.
    const streams = server.streams.length;
    await clock.advance(5_000); // a watch that lived a while: its end is routine, not a failure
    server.closeWatches();
    server.failNextWatch(410, {
      kind: 'Status',
      status: 'Failure',
      reason: 'Expired',
      code: 410,
      message: 'too old resource version',
    });
    server.remove(COLLECTION, 'b');
    server.seed(COLLECTION, cm('d'));
    changes = [];
    await clock.advance(0);
    expect(server.streams.length).to.be.greaterThan(streams);
    expect(lists()).to.have.length(2);
    expect(changes).to.deep.equal([
      ['update', 'a'],
      ['add', 'd'],
      ['delete', 'b'],
    ]);
  });

  it('relists when the watch stream carries an ERROR event with code 410', async () => {
    changes = [];
    server.sendToWatches(COLLECTION, {
      type: 'ERROR',
      object: {
        kind: 'Status',
        status: 'Failure',
        reason: 'Expired',
        code: 410,
        message: 'too old resource version: 1 (223)',
      },
    });
    await clock.advance(0);
    expect(lists()).to.have.length(2);
    expect(changes.map(([t]) => t)).to.deep.equal(['update', 'update']);
    expect(informer.health().watching).to.equal(true);
  });

  it('reconnects with backoff after any other error, and /readyz-relevant health shows the outage', async () => {
    server.failNextWatch(500, { kind: 'Status', code: 500, reason: 'InternalError', message: 'boom' });
    server.failNextWatch(500, { kind: 'Status', code: 500, reason: 'InternalError', message: 'boom' });
    await clock.advance(5_000);
    server.closeWatches();
    await settle();
    expect(watches()).to.have.length(2); // the failed reconnect
    expect(informer.health().watching).to.equal(false);
    await clock.advance(199);
    expect(watches()).to.have.length(2);
    await clock.advance(1); // 200 ms: second try, fails again
    expect(watches()).to.have.length(3);
    await clock.advance(399);
    expect(watches()).to.have.length(3);
    expect(informer.health().downForMs).to.equal(599);
    await clock.advance(1); // 400 ms later: third try succeeds
    expect(watches()).to.have.length(4);
    expect(informer.health()).to.include({ watching: true, downForMs: 0 });
    expect(lists()).to.have.length(1); // no relist: the resourceVersion was still good
  });

  it('restarts a watch that stays silent longer than the idle timeout', async () => {
    await clock.advance(149_999);
    expect(watches()).to.have.length(1);
    expect(informer.health().lastEventAgeMs).to.equal(149_999);
    await clock.advance(1);
    expect(watches()).to.have.length(2);
    expect(watches()[1]?.query?.resourceVersion).to.equal(watches()[0]?.query?.resourceVersion);
  });

  it('counts the age of the last event or bookmark', async () => {
    await clock.advance(30_000);
    expect(informer.health().lastEventAgeMs).to.equal(30_000);
    server.sendToWatches(COLLECTION, {
      type: 'BOOKMARK',
      object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '999' } },
    });
    await settle();
    expect(informer.health().lastEventAgeMs).to.equal(0);
  });
});
