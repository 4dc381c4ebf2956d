import { expect } from 'chai';
import { type LeadershipEnd, LeaseElector } from '../../controller/leader/lease-elector.ts';
import { silentLogger } from '../../controller/observability/logger.ts';
import { KubeApi } from '../../kube/api-client.ts';
import type { Lease } from '../../kube/objects.ts';
import { FakeApiServer, ManualClock, settle } from '../support/kube/index.ts';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/sys/leases';

interface Candidate {
  elector: LeaseElector;
  stop: AbortController;
  leading: AbortSignal | undefined;
  end: Promise<LeadershipEnd>;
}

describe('controller: leader election on a Lease', () => {
  let clock: ManualClock;
  let server: FakeApiServer;

  const lease = () => server.read<Lease>(LEASES, 'staticsite-controller');

  function candidate(identity: string): Candidate {
    const elector = new LeaseElector({
      api: new KubeApi(server),
      clock,
      logger: silentLogger(),
      namespace: 'sys',
      name: 'staticsite-controller',
      identity,
    });
    const c: Candidate = { elector, stop: new AbortController(), leading: undefined, end: Promise.resolve('stopped') };
    c.end = elector.run(c.stop.signal, async (leading) => {
      c.leading = leading;
      await new Promise<void>((resolve) => leading.addEventListener('abort', () => resolve(), { once: true }));
    });
    return c;
  }

  beforeEach(() => {
    clock = new ManualClock();
    server = new FakeApiServer();
  });

  it('creates the Lease when there is none and leads', async () => {
    const a = candidate('a');
    await settle();
    expect(a.elector.isLeader()).to.equal(true);
    expect(a.leading?.aborted).to.equal(false);
    expect(lease()?.spec).to.deep.include({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 });
    expect(lease()?.spec?.renewTime).to.equal('2026-11-29T12:00:00.000000Z');
    a.stop.abort();
    expect(await a.end).to.equal('stopped');
  });

  it('renews every retry period; a standby waits while the record keeps changing', async () => {
    const a = candidate('a');
    await settle();
    const b = candidate('b');
    await clock.advance(30_000);
    expect(b.elector.isLeader()).to.equal(false);
    expect(lease()?.spec?.holderIdentity).to.equal('a');
    expect(lease()?.spec?.renewTime).to.equal('2026-11-29T12:00:30.000000Z');
    a.stop.abort();
    b.stop.abort();
    await Promise.all([a.end, b.end]);
  });

  it('a standby takes over one lease duration after the leader stops renewing', async () => {
    const a = candidate('a');
    await settle();
    const b = candidate('b');
    await settle();
    // The leader dies without releasing: its renewals simply stop.
    server.failNext(
      (r) =>
        r.path.endsWith('/staticsite-controller') &&
        r.method !== 'GET' &&
        r.body !== undefined &&
        JSON.stringify(r.body).includes('"holderIdentity":"a"'),
      { status: 500, reason: 'InternalError' },
      1_000_000,
    );
    await clock.advance(14_999);
    expect(b.elector.isLeader()).to.equal(false);
    await clock.advance(2_001); // observed at t=0 (b's first look) + 15 s, rounded up to b's next try
    expect(b.elector.isLeader()).to.equal(true);
    expect(lease()?.spec).to.deep.include({ holderIdentity: 'b', leaseTransitions: 1 });
    a.stop.abort();
    b.stop.abort();
    await Promise.all([a.end, b.end]);
  });

  it('stops leading the moment the renew deadline passes after the last accepted renewal', async () => {
    const a = candidate('a');
    await settle();
    server.failNext((r) => r.path.startsWith(LEASES), { status: 503, reason: 'ServiceUnavailable' }, 1_000_000);
    // Acquired at t=0 (the last accepted renewal); the attempts from t=2 s on fail; the deadline is t=10 s.
    await clock.advance(2_000);
    expect(a.leading?.aborted).to.equal(false);
    await clock.advance(7_999);
    expect(a.leading?.aborted).to.equal(false);
    await clock.advance(1);
    expect(a.leading?.aborted).to.equal(true);
    expect(a.leading?.reason).to.equal('lost');
    expect(await a.end).to.equal('lost');
    expect(a.elector.isLeader()).to.equal(false);
  });

  it('stops leading at once when it sees another holder', async () => {
    const a = candidate('a');
    await settle();
    server.modify<Lease>(LEASES, 'staticsite-controller', (l) => {
      l.spec = { ...l.spec, holderIdentity: 'intruder' };
    });
    await clock.advance(2_000);
    expect(a.leading?.aborted).to.equal(true);
    expect(await a.end).to.equal('lost');
  });

  it('releases the lease on a clean stop, so a standby takes over at once', async () => {
    const a = candidate('a');
    await settle();
    const b = candidate('b');
    await clock.advance(4_000);
    a.stop.abort();
    expect(await a.end).to.equal('stopped');
    expect(lease()?.spec).to.deep.include({ holderIdentity: '', leaseDurationSeconds: 1 });
    await clock.advance(2_000);
    expect(b.elector.isLeader()).to.equal(true);
    expect(lease()?.spec).to.deep.include({ holderIdentity: 'b', leaseTransitions: 1 });
    b.stop.abort();
    await b.end;
  });
});
