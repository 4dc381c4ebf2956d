import { createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import fc from 'fast-check';
import { FINALIZER } from '../../api/constants.ts';
import { createCertificateAuthority, issueCertificate, type KeyPair } from '../../certs/x509.ts';
import { ApiProxy } from '../support/controller-api-proxy.ts';
import {
  checkHistory,
  converged,
  convergedWithin,
  type FinalSite,
  type FinalState,
  formatViolations,
  type History,
  historyFromProxies,
  hostnamesUnique,
  type LeadershipExpectation,
  leadershipWindows,
  noStuckFinalizers,
  overlappingSiteWrites,
  parseApiPath,
  type RecordedRequest,
  recordsConsistent,
  siteWriteSpans,
  writesOutsideLeadership,
} from '../support/history/index.ts';

const SYS = 'staticsite-system';
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${SYS}/leases`;
const ELECTION = 'staticsite-controller';
const single: LeadershipExpectation = { leaseNamespace: SYS, leaseFor: () => ELECTION };
const shardLease = (identity: string) => `staticsite-shard-${identity}`;
const sharded: LeadershipExpectation = { leaseNamespace: SYS, leaseFor: shardLease };

/** An accepted (by default) write of the Lease `name` naming `holder`, answered 2 ms later. */
function leaseWrite(name: string, holder: string, at: number, status = 200): RecordedRequest {
  return { method: 'PUT', path: `${LEASES}/${name}`, status, at, answeredAt: at + 2, name, holder, leaseName: name };
}

function write(path: string, at: number, status = 200, method = 'PUT'): RecordedRequest {
  return { method, path, status, at, answeredAt: at + 1 };
}

const configMap = (site: string, ns = 'web') => `/api/v1/namespaces/${ns}/configmaps/${site}`;
const siteStatus = (site: string, ns = 'web') => `/apis/staticsite.dev/v1/namespaces/${ns}/staticsites/${site}/status`;

function history(replicas: Record<string, RecordedRequest[]>, rest: Omit<History, 'replicas'> = {}): History {
  return { replicas: Object.entries(replicas).map(([identity, requests]) => ({ identity, requests })), ...rest };
}

/** a leads from 1000, b takes over at 2000; `aWrite` is one more request of a. */
function takeover(aWrite: RecordedRequest): History {
  return history({
    a: [leaseWrite(ELECTION, 'a', 1000), write(configMap('s1'), 1100), leaseWrite(ELECTION, 'a', 1500), aWrite],
    b: [leaseWrite(ELECTION, 'b', 1200, 409), leaseWrite(ELECTION, 'b', 2000), write(configMap('s1'), 2100)],
  });
}

describe('history checker: leadership windows', () => {
  /** A write of the Lease that also sets its duration, as the elector's acquires and renewals do. */
  const timedLeaseWrite = (name: string, holder: string, at: number, seconds: number) => ({
    ...leaseWrite(name, holder, at),
    leaseDurationSeconds: seconds,
  });

  it('a lease duration after the holder’s last accepted write, its window closes, though nobody takes it over', () => {
    const lease = shardLease('c');
    const h = history({
      c: [
        timedLeaseWrite(lease, 'c', 1000, 4),
        timedLeaseWrite(lease, 'c', 2000, 4),
        write(configMap('s1'), 5999),
        write(configMap('s1'), 6000),
        // Accepted after the expiry (nobody else wanted it): a new window, from its answer.
        timedLeaseWrite(lease, 'c', 7000, 4),
        write(configMap('s1'), 7500),
      ],
    });
    expect(leadershipWindows(h, lease, SYS)).to.deep.equal([
      { replica: 'c', from: 1002, until: 6000, expired: true },
      { replica: 'c', from: 7002, until: 11_000, expired: true },
    ]);
    const violations = writesOutsideLeadership(h, sharded);
    expect(violations.map((v) => v.detail)).to.deep.equal([
      `PUT ${configMap('s1')} at 6000, accepted (200): outside its leadership of ${lease}, 0 ms after its window closed at 6000 (expired), 1002 ms before its next window opened at 7002`,
    ]);
  });

  it('a takeover before the expiry closes the window at the takeover', () => {
    const h = history({
      a: [timedLeaseWrite(ELECTION, 'a', 1000, 15)],
      b: [timedLeaseWrite(ELECTION, 'b', 3000, 15)],
    });
    expect(leadershipWindows(h, ELECTION, SYS)).to.deep.equal([
      { replica: 'a', from: 1002, until: 3000, endedBy: 'b' },
      { replica: 'b', from: 3002, until: 18_000, expired: true },
    ]);
  });

  it('opens when the acquire was answered, closes when the takeover was received; renewals and refused writes change nothing', () => {
    const h = takeover(write(configMap('s2'), 1300));
    expect(leadershipWindows(h, ELECTION, SYS)).to.deep.equal([
      { replica: 'a', from: 1002, until: 2000, endedBy: 'b' },
      { replica: 'b', from: 2002, until: Infinity },
    ]);
    expect(leadershipWindows(h, ELECTION, 'elsewhere')).to.deep.equal([]);
    expect(leadershipWindows(h, 'staticsite-shard-a', SYS)).to.deep.equal([]);
  });

  it('a release or a DELETE ends the window; the same holder acquiring again opens a new one', () => {
    const h = history({
      a: [
        leaseWrite(ELECTION, 'a', 1000),
        leaseWrite(ELECTION, '', 1500),
        leaseWrite(ELECTION, 'a', 1800),
        { method: 'DELETE', path: `${LEASES}/${ELECTION}`, status: 200, at: 1900, name: ELECTION },
      ],
    });
    expect(leadershipWindows(h, ELECTION, SYS)).to.deep.equal([
      { replica: 'a', from: 1002, until: 1500, endedBy: '' },
      { replica: 'a', from: 1802, until: 1900, endedBy: '' },
    ]);
  });

  it('a POST that creates the Lease is an acquire; without an answer time, the window opens at `at`', () => {
    const h = history({
      a: [{ method: 'POST', path: LEASES, status: 201, at: 500, name: ELECTION, holder: 'a', leaseName: ELECTION }],
    });
    expect(leadershipWindows(h, ELECTION, SYS)).to.deep.equal([{ replica: 'a', from: 500, until: Infinity }]);
  });
});

describe('history checker: writesOutsideLeadership', () => {
  it('the old leader writing a ConfigMap 200 ms after the new leader’s accepted acquire is a violation', () => {
    const violations = writesOutsideLeadership(takeover(write(configMap('s1'), 2200)), single);
    expect(violations).to.have.length(1);
    expect(violations[0]).to.include({ rule: 'writesOutsideLeadership', replica: 'a' });
    expect(violations[0]?.detail).to.include('PUT /api/v1/namespaces/web/configmaps/s1 at 2200, accepted (200)');
    expect(violations[0]?.detail).to.include('200 ms after its window closed at 2000 (taken by b)');
  });

  it('the same write 1 ms before the acquire was received is no violation; at the same millisecond it is', () => {
    expect(writesOutsideLeadership(takeover(write(configMap('s1'), 1999)), single)).to.deep.equal([]);
    expect(writesOutsideLeadership(takeover(write(configMap('s1'), 2000)), single)).to.have.length(1);
  });

  it('a write refused by the server or never answered still counts: it was sent', () => {
    const refused = writesOutsideLeadership(takeover(write(configMap('s1'), 2200, 409)), single);
    expect(refused[0]?.detail).to.include('refused (409)');
    const lost = writesOutsideLeadership(
      takeover({ method: 'PATCH', path: siteStatus('s1'), status: 0, at: 2300 }),
      single,
    );
    expect(lost[0]?.detail).to.include('PATCH').and.include('never answered');
  });

  it('a write after the leader’s own release, or before it first led, is a violation', () => {
    const h = history({
      a: [
        write(configMap('s1'), 900, 201, 'POST'),
        leaseWrite(ELECTION, 'a', 1000),
        leaseWrite(ELECTION, '', 1500),
        write(configMap('s1'), 1600),
      ],
    });
    const violations = writesOutsideLeadership(h, single);
    expect(violations.map((v) => v.detail)).to.deep.equal([
      'POST /api/v1/namespaces/web/configmaps/s1 at 900, accepted (201): outside its leadership of staticsite-controller, before it first held the lease, 102 ms before its next window opened at 1002',
      'PUT /api/v1/namespaces/web/configmaps/s1 at 1600, accepted (200): outside its leadership of staticsite-controller, 100 ms after its window closed at 1500 (released)',
    ]);
  });

  it('reads, watches, dry runs, reviews, campaigning and exempted writes are not checked', () => {
    const h = history({
      b: [
        { method: 'GET', path: configMap('s1'), status: 200, at: 10 },
        { method: 'GET', path: '/api/v1/namespaces/web/configmaps', status: 200, at: 10, watch: true },
        { ...write('/api/v1/namespaces/web/configmaps', 11, 201, 'POST'), dryRun: true },
        write('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', 12, 201, 'POST'),
        leaseWrite(ELECTION, 'b', 13, 409),
        leaseWrite(shardLease('shard-b'), 'b', 14),
        write('/api/v1/namespaces/web/events', 15, 201, 'POST'),
      ],
    });
    expect(writesOutsideLeadership(h, single)).to.have.length(1);
    const exemptEvents: LeadershipExpectation = {
      ...single,
      leaseFor: (_, r) => (r.path.includes('/events') ? undefined : ELECTION),
    };
    expect(writesOutsideLeadership(h, exemptEvents)).to.deep.equal([]);
    // Lease writes that are not the election's (hostname claims) are fenced like any other write.
    const claim = history({ b: [leaseWrite('claim-1', 'web/s1', 20)] });
    expect(writesOutsideLeadership(claim, single)).to.have.length(1);
    expect(writesOutsideLeadership(claim, { ...single, electionLeases: ['claim-1'] })).to.deep.equal([]);
  });

  it('shards: each is fenced by its own Lease, whoever leads the election Lease', () => {
    const h = history({
      'shard-a': [
        leaseWrite(shardLease('shard-a'), 'shard-a', 1000),
        leaseWrite(ELECTION, 'shard-a', 1000),
        write(configMap('s1'), 1100),
        leaseWrite(shardLease('shard-a'), '', 1500),
        write(configMap('s1'), 1600),
      ],
      'shard-b': [
        leaseWrite(shardLease('shard-b'), 'shard-b', 1000),
        leaseWrite(ELECTION, 'shard-b', 1200),
        write(configMap('s2'), 1300),
      ],
    });
    const violations = writesOutsideLeadership(h, sharded);
    expect(violations.map((v) => v.replica)).to.deep.equal(['shard-a']);
    expect(violations[0]?.detail).to.include('at 1600').and.include('leadership of staticsite-shard-shard-a');
    // Fenced by the election Lease instead, shard-a's write at 1600 comes after shard-b took that Lease.
    expect(writesOutsideLeadership(h, single).map((v) => v.replica)).to.deep.equal(['shard-a']);
  });
});

describe('history checker: overlappingSiteWrites', () => {
  const deployment = (name: string) => `/apis/apps/v1/namespaces/web/deployments/${name}`;

  it('a shard writing a site after another took it over, while that one still writes it, is a violation', () => {
    const h = history({
      'shard-a': [write(configMap('s1'), 1000), write(deployment('s1'), 1500), write(siteStatus('s1'), 2300, 409)],
      'shard-b': [write(configMap('s1'), 2000), write(siteStatus('s1'), 2500), write(configMap('s2'), 2400)],
    });
    const violations = overlappingSiteWrites(h);
    expect(violations).to.deep.equal([
      {
        rule: 'overlappingSiteWrites',
        detail: 'web/s1: shard-a wrote it from 1000 to 2300 and shard-b from 2000 to 2500',
      },
    ]);
  });

  it('a clean hand-over, or different sites, or other namespaces are no violation', () => {
    const h = history({
      'shard-a': [write(configMap('s1'), 1000), write(siteStatus('s1'), 1500), write(configMap('s2', 'other'), 2100)],
      'shard-b': [write(configMap('s1'), 2000), write(configMap('s2'), 2100), write(siteStatus('s1'), 2500)],
    });
    expect(overlappingSiteWrites(h)).to.deep.equal([]);
  });

  it('a site that moves back is an overlap unless a boundary cuts the spans there', () => {
    const h = history({
      'shard-a': [write(configMap('s1'), 1000), write(configMap('s1'), 5000)],
      'shard-b': [write(configMap('s1'), 2000), write(configMap('s1'), 3000)],
    });
    expect(overlappingSiteWrites(h)).to.have.length(1);
    expect(overlappingSiteWrites(h, { boundaries: [4000] })).to.deep.equal([]);
  });

  it('spans cover children of every kind, by path or by the POST body’s name, and status; not the site itself', () => {
    const paths = [
      { ...write('/api/v1/namespaces/web/services', 10, 201, 'POST'), name: 's1' },
      write('/apis/gateway.networking.k8s.io/v1/namespaces/web/httproutes/s1', 20),
      write('/apis/networking.k8s.io/v1/namespaces/web/ingresses/s1', 30, 200, 'PATCH'),
      write(siteStatus('s1'), 40),
      write('/apis/staticsite.dev/v1/namespaces/web/staticsites/s1', 90, 200, 'PATCH'),
      write('/api/v1/namespaces/web/events', 95, 201, 'POST'),
      { method: 'GET', path: configMap('s1'), status: 200, at: 99 },
    ];
    expect(siteWriteSpans({ identity: 'x', requests: paths })).to.deep.equal([
      { replica: 'x', site: 'web/s1', first: 10, last: 40 },
    ]);
  });
});

describe('history checker: final state', () => {
  const site = (name: string, extra: Partial<FinalSite> = {}): FinalSite => ({
    namespace: 'web',
    name,
    generation: 2,
    finalizers: [FINALIZER],
    hostname: `${name}.example.com`,
    readyObservedGeneration: 2,
    readyStatus: 'True',
    ...extra,
  });
  const healthy: FinalState = {
    sites: [site('s1'), site('s2'), site('s3', { deletionTimestamp: '2026-12-06T10:00:00Z' })],
    records: [
      { siteKey: 'web/s1', hostname: 's1.example.com' },
      { siteKey: 'web/s2', hostname: 's2.example.com' },
    ],
    deletedSites: ['web/gone'],
  };
  const rules = (final: FinalState) => [
    ...recordsConsistent(final),
    ...noStuckFinalizers(final),
    ...hostnamesUnique(final),
    ...converged(final),
  ];

  it('a consistent final state passes every rule', () => {
    expect(rules(healthy)).to.deep.equal([]);
  });

  it('an orphan record: its site no longer exists', () => {
    const final = { ...healthy, records: [...healthy.records, { siteKey: 'web/gone', hostname: 'gone.example.com' }] };
    expect(recordsConsistent(final)).to.deep.equal([
      {
        rule: 'recordsConsistent',
        detail: 'orphan: a record for gone.example.com names web/gone, which no longer exists',
      },
    ]);
  });

  it('a lost record, a stale one and a duplicate', () => {
    const lost = recordsConsistent({ ...healthy, records: healthy.records.slice(1) });
    expect(lost.map((v) => v.detail)).to.deep.equal(['lost: web/s1 has no record for s1.example.com']);
    const stale = recordsConsistent({
      ...healthy,
      records: [...healthy.records.slice(1), { siteKey: 'web/s1', hostname: 'old.example.com' }],
    });
    expect(stale.map((v) => v.detail.split(':')[0])).to.deep.equal(['lost', 'stale']);
    const twice = recordsConsistent({
      ...healthy,
      records: [...healthy.records, { siteKey: 'web/s1', hostname: 's1.example.com' }],
    });
    expect(twice.map((v) => v.detail)).to.deep.equal(['duplicate: web/s1 has 2 records for s1.example.com']);
  });

  it('a site without our finalizer or being deleted needs no record', () => {
    const final = { ...healthy, sites: [...healthy.sites, site('s4', { finalizers: [] })] };
    expect(recordsConsistent(final)).to.deep.equal([]);
  });

  it('a stuck finalizer: a site the test deleted still exists', () => {
    const final = { ...healthy, deletedSites: ['web/s3', 'web/gone'] };
    expect(noStuckFinalizers(final)).to.deep.equal([
      {
        rule: 'noStuckFinalizers',
        detail: `web/s3 was deleted but still exists (deleting since 2026-12-06T10:00:00Z, finalizers [${FINALIZER}])`,
      },
    ]);
  });

  it('a duplicate hostname, between sites and between records', () => {
    const final: FinalState = {
      ...healthy,
      sites: [...healthy.sites, site('s5', { hostname: 's1.example.com' })],
      records: [...healthy.records, { siteKey: 'web/s5', hostname: 's1.example.com' }],
    };
    expect(hostnamesUnique(final).map((v) => v.detail)).to.deep.equal([
      'sites share s1.example.com: web/s1, web/s5',
      'records share s1.example.com: record of web/s1, record of web/s5',
    ]);
  });

  it('not converged: Ready not True, or for an older generation; deleting sites are not judged', () => {
    const final: FinalState = {
      ...healthy,
      sites: [
        site('s1', { readyStatus: 'False' }),
        site('s2', { generation: 3 }),
        site('s3', { deletionTimestamp: 'x', readyStatus: undefined }),
        site('s4', { readyStatus: undefined, readyObservedGeneration: undefined }),
      ],
    };
    expect(converged(final).map((v) => v.detail)).to.deep.equal([
      'web/s1 at generation 2: Ready False at observedGeneration 2',
      'web/s2 at generation 3: Ready True at observedGeneration 2',
      'web/s4 at generation 2: Ready absent at observedGeneration none',
    ]);
  });
});

describe('history checker: convergedWithin, checkHistory, formatViolations', () => {
  it('convergence slower than the bound, or never seen, is a violation', () => {
    const samples = [
      { label: 'leader paused', faultsStoppedAt: 1000, convergedAt: 5000 },
      { label: 'API server restarted', faultsStoppedAt: 1000, convergedAt: 21_001 },
      { label: 'partition', faultsStoppedAt: 1000 },
    ];
    expect(convergedWithin(samples, 20_000).map((v) => v.detail)).to.deep.equal([
      'API server restarted: converged 20001 ms after, bound 20000 ms',
      'partition: never converged after 1000',
    ]);
    expect(convergedWithin(samples.slice(0, 1), 4000)).to.deep.equal([]);
  });

  it('checkHistory runs every rule the history has data for', () => {
    const h = takeover(write(configMap('s1'), 2200));
    const withAll: History = {
      ...h,
      final: {
        sites: [],
        records: [{ siteKey: 'web/s1', hostname: 'a' }],
        deletedSites: [],
      },
      convergence: [{ label: 'takeover', faultsStoppedAt: 2000, convergedAt: 9000 }],
    };
    const violations = checkHistory(withAll, { leadership: single, convergenceBoundMs: 5000 });
    expect(violations.map((v) => v.rule)).to.deep.equal([
      'writesOutsideLeadership',
      'overlappingSiteWrites',
      'recordsConsistent',
      'convergedWithin',
    ]);
    expect(() => checkHistory(withAll, { leadership: single })).to.throw(/convergenceBoundMs/);
    expect(checkHistory(takeover(write(configMap('s1'), 1999)), { leadership: single })).to.deep.equal([]);
  });

  it('formats violations one a line', () => {
    expect(formatViolations([])).to.equal('no violations');
    expect(
      formatViolations([
        { rule: 'converged', detail: 'web/s1 not ready' },
        { rule: 'writesOutsideLeadership', replica: 'a', detail: 'PUT x' },
      ]),
    ).to.equal('2 violations:\n  - converged: web/s1 not ready\n  - writesOutsideLeadership [a]: PUT x');
  });

  it('parses API paths: namespaced, cluster-scoped, subresources, the Namespace itself', () => {
    expect(parseApiPath(siteStatus('s1'))).to.deep.equal({
      group: 'staticsite.dev',
      version: 'v1',
      namespace: 'web',
      resource: 'staticsites',
      name: 's1',
      subresource: 'status',
    });
    expect(parseApiPath('/api/v1/namespaces/web')).to.deep.equal({
      group: '',
      version: 'v1',
      resource: 'namespaces',
      name: 'web',
    });
    expect(parseApiPath('/api/v1/namespaces/web/status')).to.include({ resource: 'namespaces', subresource: 'status' });
    expect(parseApiPath(LEASES)).to.deep.equal({
      group: 'coordination.k8s.io',
      version: 'v1',
      namespace: SYS,
      resource: 'leases',
    });
    expect(parseApiPath('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews')).to.include({
      resource: 'selfsubjectaccessreviews',
    });
    expect(parseApiPath('/healthz')).to.equal(undefined);
    expect(parseApiPath('/apis/apps/v1')).to.equal(undefined);
  });
});

/** A generated run: terms of leadership one after another, each replica writing only inside its own. */
interface Term {
  holder: number;
  length: number;
  latency: number;
  release: boolean;
  gap: number;
  writes: number[];
}

const REPLICAS = ['r0', 'r1', 'r2'];

const termsArb = fc
  .array(
    fc.record({
      step: fc.integer({ min: 1, max: REPLICAS.length - 1 }),
      length: fc.integer({ min: 10, max: 1000 }),
      latency: fc.integer({ min: 0, max: 5 }),
      release: fc.boolean(),
      gap: fc.integer({ min: 1, max: 100 }),
      writes: fc.array(fc.nat(), { maxLength: 5 }),
    }),
    { minLength: 2, maxLength: 8 },
  )
  .map((raw) => {
    let holder = 0;
    return raw.map(({ step, ...rest }, i): Term => {
      if (i > 0) holder = (holder + step) % REPLICAS.length;
      return { holder, ...rest, writes: i === 0 ? [0, ...rest.writes] : rest.writes };
    });
  });

interface Built {
  history: History;
  /** Per term: its holder, when its window opened and when it closed. */
  windows: Array<{ replica: string; from: number; until: number; writes: RecordedRequest[] }>;
}

/**
 * The Lease writes and the writes of each term. Each term's holder writes only in [from, until); the
 * others campaign (refused) meanwhile; renewals fall inside. Terms follow one another directly or
 * after a release and a gap.
 */
function build(terms: Term[]): Built {
  const requests = new Map(REPLICAS.map((r) => [r, [] as RecordedRequest[]]));
  const push = (replica: string, r: RecordedRequest) => requests.get(replica)?.push(r);
  const windows: Built['windows'] = [];
  let t = 1000;
  for (const [i, term] of terms.entries()) {
    const replica = REPLICAS[term.holder] as string;
    push(replica, { ...leaseWrite(ELECTION, replica, t), answeredAt: t + term.latency });
    const from = t + term.latency;
    const until = t + term.length;
    const writes = term.writes.map((w, j) =>
      write(configMap(`s${j}`), from + (w % (until - from)), [200, 201, 409, 0][w % 4] as number),
    );
    for (const w of writes) push(replica, w);
    push(replica, leaseWrite(ELECTION, replica, from + Math.floor((until - from) / 2)));
    push(REPLICAS[(term.holder + 1) % REPLICAS.length] as string, leaseWrite(ELECTION, 'x', from + 1, 409));
    t = until;
    if (term.release || i === terms.length - 1) {
      push(replica, leaseWrite(ELECTION, '', t));
      t += term.gap;
    }
    windows.push({ replica, from, until, writes });
  }
  for (const list of requests.values()) list.sort((a, b) => a.at - b.at);
  return {
    history: history(Object.fromEntries(requests)),
    windows,
  };
}

describe('history checker: properties', () => {
  it('writes strictly inside their replica’s windows are never a violation', () => {
    fc.assert(
      fc.property(termsArb, (terms) => {
        const { history: h, windows } = build(terms);
        expect(
          leadershipWindows(h, ELECTION, SYS).map((w) => [w.replica, w.from, w.until]),
          'the windows as built',
        ).to.deep.equal(windows.map((w) => [w.replica, w.from, w.until]));
        expect(writesOutsideLeadership(h, single)).to.deep.equal([]);
      }),
    );
  });

  it('moving one write to after its window closed, before its replica leads again, yields exactly that violation', () => {
    fc.assert(
      fc.property(termsArb, fc.nat(), fc.nat(), (terms, pick, delay) => {
        const { history: h, windows } = build(terms);
        const candidates = windows.filter((w) => w.writes.length > 0);
        const term = candidates[pick % candidates.length] as Built['windows'][number];
        const moved = term.writes[pick % term.writes.length] as RecordedRequest;
        const nextOwn = windows.find((w) => w.replica === term.replica && w.from > term.until)?.from ?? Infinity;
        const at = term.until + (Number.isFinite(nextOwn) ? delay % (nextOwn - term.until) : delay);
        const changed: History = {
          replicas: h.replicas.map((r) => ({
            ...r,
            requests: r.requests.map((q) => (q === moved ? { ...q, at, answeredAt: at + 1 } : q)),
          })),
        };
        const violations = writesOutsideLeadership(changed, single);
        expect(violations.map((v) => [v.rule, v.replica])).to.deep.equal([['writesOutsideLeadership', term.replica]]);
        expect(violations[0]?.detail).to.include(`${moved.method} ${moved.path} at ${at},`);
      }),
    );
  });
});

describe('history checker: a recording ApiProxy', () => {
  let ca: KeyPair;
  let upstream: Server;
  let proxy: ApiProxy;

  before(async () => {
    ca = createCertificateAuthority({
      commonName: 'test-ca',
      notBefore: new Date(Date.now() - 60_000),
      validityDays: 1,
    });
    const serving = issueCertificate({
      ca,
      commonName: 'upstream',
      subjectAltNames: ['127.0.0.1'],
      usage: 'serverAuth',
      notBefore: new Date(Date.now() - 60_000),
      validityDays: 1,
    });
    upstream = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      if (req.url?.includes('hang')) {
        req.socket.destroy();
        return;
      }
      req.resume();
      req.on('end', () => {
        res.writeHead(req.url?.includes('taken') ? 409 : 200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    proxy = new ApiProxy(`https://127.0.0.1:${(upstream.address() as AddressInfo).port}`, ca);
    await proxy.start();
  });

  after(async () => {
    await proxy.stop();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  function send(method: string, path: string, body?: unknown): Promise<number> {
    return new Promise((resolve) => {
      const req = request(`${proxy.url}${path}`, { method, ca: ca.certPem, headers: { authorization: 'Bearer t' } });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', () => resolve(0));
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  it('records when the server answered, the object written, and a Lease write’s holder', async () => {
    await send('PUT', `${LEASES}/${ELECTION}`, { metadata: { name: ELECTION }, spec: { holderIdentity: 'a' } });
    await send('POST', LEASES, { metadata: { name: 'staticsite-shard-a' }, spec: { holderIdentity: 'shard-a' } });
    await send('PUT', `${LEASES}/taken`, { metadata: { name: 'taken' }, spec: { holderIdentity: '' } });
    await send('PATCH', `${LEASES}/${ELECTION}`, { spec: { renewTime: 'now' } });
    await send('PUT', siteStatus('s1'), { status: {} });
    await send('DELETE', configMap('s2'));
    await send('GET', configMap('s2'));
    await send('PUT', configMap('hang'), {});
    const [lease, created, released, patched, status, deleted, read, hung] = proxy.requests;
    expect(lease).to.include({ status: 200, name: ELECTION, leaseName: ELECTION, holder: 'a' });
    expect(lease?.answeredAt)
      .to.be.a('number')
      .at.least(lease?.at ?? Infinity);
    expect(created).to.include({ name: 'staticsite-shard-a', leaseName: 'staticsite-shard-a', holder: 'shard-a' });
    expect(released).to.include({ status: 409, leaseName: 'taken', holder: '' });
    expect(patched).to.include({ leaseName: ELECTION }).and.not.have.property('holder');
    expect(status).to.include({ name: 's1' }).and.not.have.property('holder');
    expect(deleted).to.include({ method: 'DELETE', name: 's2' });
    expect(read?.name).to.equal(undefined);
    expect([hung?.status, hung?.answeredAt]).to.deep.equal([0, undefined]);

    const h = historyFromProxies(new Map([['a', proxy]]));
    expect(h.replicas[0]?.identity).to.equal('a');
    expect(h.replicas[0]?.requests[0]).to.deep.equal({
      method: 'PUT',
      path: `${LEASES}/${ELECTION}`,
      status: 200,
      at: lease?.at,
      answeredAt: lease?.answeredAt,
      watch: false,
      dryRun: false,
      name: ELECTION,
      holder: 'a',
      leaseName: ELECTION,
    });
    expect(leadershipWindows(h, ELECTION, SYS)).to.deep.equal([
      { replica: 'a', from: lease?.answeredAt, until: Infinity },
    ]);
    expect(historyFromProxies({ b: proxy }).replicas[0]?.identity).to.equal('b');
  });
});
