import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { type LeadershipEnd, LeaseElector } from '../../controller/leader/lease-elector.ts';
import { silentLogger } from '../../controller/observability/logger.ts';
import type { DnsTransport } from '../../controller/records/dns/client.ts';
import { fencedDnsTransport } from '../../controller/records/fenced.ts';
import { FileRecordStore, nodeFileSystem } from '../../controller/records/file-record-store.ts';
import { createRecordStore } from '../../controller/records/records-config.ts';
import { KubeApi } from '../../kube/api-client.ts';
import { FencedError, isFenced, LeaseFence, type WriteFence } from '../../kube/lease-fence.ts';
import type { Lease } from '../../kube/objects.ts';
import { HttpsTransport, type RequestThrottle } from '../../kube/transport.ts';
import { FakeApiServer, ManualClock, settle } from '../support/kube/index.ts';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/sys/leases';
const RENEW_DEADLINE_MS = 10_000;

function fenceOn(clock: ManualClock): LeaseFence {
  return new LeaseFence({ lease: 'sys/staticsite-controller', clock, renewDeadlineMs: RENEW_DEADLINE_MS });
}

function refusal(fence: LeaseFence, what = 'PUT /x'): string {
  try {
    fence.assertMayWrite(what);
  } catch (error) {
    expect(error).to.be.instanceOf(FencedError);
    return (error as Error).message;
  }
  throw new Error('the fence let the write through');
}

describe('fencing: a write leaves only while the lease is proven (kube/lease-fence.ts)', () => {
  it('refuses before the first renewal, allows until the renew deadline after it, refuses from then on', async () => {
    const clock = new ManualClock();
    const fence = fenceOn(clock);
    expect(refusal(fence)).to.equal('PUT /x: not sent: the Lease sys/staticsite-controller is not held');
    fence.renewed(clock.monotonic());
    await clock.advance(RENEW_DEADLINE_MS - 1);
    expect(() => fence.assertMayWrite('PUT /x')).not.to.throw();
    await clock.advance(1);
    expect(refusal(fence)).to.equal(
      'PUT /x: not sent: the Lease sys/staticsite-controller was last renewed 10.0 s ago (renew deadline 10 s)',
    );
    fence.renewed(clock.monotonic());
    expect(fence.check().ok).to.equal(true);
    fence.revoke();
    expect(refusal(fence)).to.include('is not held');
  });

  it('counts on the monotonic clock: a wall-clock step either way changes nothing', async () => {
    const clock = new ManualClock('2026-12-06T12:00:00Z');
    const fence = fenceOn(clock);
    fence.renewed(clock.monotonic());
    clock.set('2026-12-06T11:00:00Z'); // an hour back: a wall-clock fence would stretch by an hour
    await clock.advance(RENEW_DEADLINE_MS);
    expect(fence.check().ok).to.equal(false);
    fence.renewed(clock.monotonic());
    clock.set('2026-12-07T12:00:00Z'); // a day forward: a wall-clock fence would close at once
    expect(fence.check().ok).to.equal(true);
  });

  it('an older renewal reported late never moves the proof back', () => {
    const clock = new ManualClock();
    const fence = fenceOn(clock);
    clock.stall(5_000);
    fence.renewed(5_000);
    fence.renewed(1_000);
    clock.stall(RENEW_DEADLINE_MS - 1);
    expect(fence.check().ok).to.equal(true);
  });

  it('tells its breach listeners of every refused write, with the reason', () => {
    const fence = fenceOn(new ManualClock());
    const reasons: string[] = [];
    const unsubscribe = fence.onBreach((reason) => reasons.push(reason));
    refusal(fence);
    unsubscribe();
    refusal(fence);
    expect(reasons).to.deep.equal(['the Lease sys/staticsite-controller is not held']);
  });
});

describe('fencing: the transport sends no write the fence refuses', () => {
  let server: Server;
  let url: string;
  const received: string[] = [];

  before(async () => {
    server = createServer((req: IncomingMessage, res) => {
      req.resume();
      req.on('end', () => {
        received.push(`${req.method} ${req.url}`);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    received.length = 0;
  });

  it('every verb but GET is refused with FencedError and never reaches the server; GETs pass', async () => {
    const clock = new ManualClock();
    const fence = fenceOn(clock);
    const transport = HttpsTransport.direct({ server: url }, { clock, fence });
    try {
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        const error = await transport.request(method, '/api/v1/namespaces/a/configmaps/b', { body: {} }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isFenced(error), method).to.equal(true);
        expect((error as Error).message).to.equal(
          `${method} /api/v1/namespaces/a/configmaps/b: not sent: the Lease sys/staticsite-controller is not held`,
        );
      }
      expect((await transport.request('GET', '/api/v1/namespaces/a/configmaps/b')).status).to.equal(200);
      fence.renewed(clock.monotonic());
      expect((await transport.request('PUT', '/api/v1/namespaces/a/configmaps/b', { body: {} })).status).to.equal(200);
      expect(received).to.deep.equal([
        'GET /api/v1/namespaces/a/configmaps/b',
        'PUT /api/v1/namespaces/a/configmaps/b',
      ]);
    } finally {
      transport.close();
    }
  });

  it('asked again once the connection can take the bytes: a lapse while connecting sends nothing', async () => {
    const asked: string[] = [];
    // Proven when the request is made, lapsed by the time its new connection is up.
    const fence: WriteFence = {
      assertMayWrite: (what) => {
        asked.push(what);
        if (asked.length > 1) throw new FencedError('sys/l', `${what}: not sent: lapsed while connecting`);
      },
    };
    const transport = HttpsTransport.direct({ server: url }, { clock: new ManualClock(), fence });
    try {
      const error = await transport.request('DELETE', '/api/v1/namespaces/a/pods/p', { body: {} }).catch((e) => e);
      expect((error as Error).message).to.equal(
        'DELETE /api/v1/namespaces/a/pods/p: not sent: lapsed while connecting',
      );
      expect(asked).to.deep.equal(['DELETE /api/v1/namespaces/a/pods/p', 'DELETE /api/v1/namespaces/a/pods/p']);
      await transport.request('GET', '/api/v1/namespaces/a/pods/p');
      expect(asked).to.have.length(2);
      expect(received).to.deep.equal(['GET /api/v1/namespaces/a/pods/p']);
    } finally {
      transport.close();
    }
  });

  it('a write held back by the throttle is judged when it leaves, not when it was queued', async () => {
    const clock = new ManualClock();
    const fence = fenceOn(clock);
    fence.renewed(clock.monotonic());
    // The throttle releases the write only after the process stalled past the renew deadline.
    const throttle: RequestThrottle = {
      acquire: async () => {
        clock.stall(RENEW_DEADLINE_MS);
      },
    };
    const transport = HttpsTransport.direct({ server: url }, { clock, fence, throttle });
    try {
      const error = await transport.request('POST', '/api/v1/namespaces/a/configmaps', { body: {} }).catch((e) => e);
      expect(isFenced(error)).to.equal(true);
      expect(received).to.deep.equal([]);
    } finally {
      transport.close();
    }
  });
});

describe('fencing: the elector ends its term the moment its proof lapses', () => {
  interface Term {
    elector: LeaseElector;
    fence: LeaseFence;
    leading: AbortSignal | undefined;
    end: Promise<LeadershipEnd>;
    stop: AbortController;
  }

  function lead(clock: ManualClock, server: FakeApiServer, identity: string): Term {
    const fence = fenceOn(clock);
    const elector = new LeaseElector({
      api: new KubeApi(server),
      clock,
      logger: silentLogger(),
      namespace: 'sys',
      name: 'staticsite-controller',
      identity,
      fence,
    });
    const term: Term = {
      elector,
      fence,
      leading: undefined,
      end: Promise.resolve('stopped'),
      stop: new AbortController(),
    };
    term.end = elector.run(term.stop.signal, async (leading) => {
      term.leading = leading;
      await new Promise<void>((resolve) => leading.addEventListener('abort', () => resolve(), { once: true }));
    });
    return term;
  }

  it('elected: writes pass; each accepted renewal extends them; a clean stop closes the fence before the release', async () => {
    const clock = new ManualClock();
    const server = new FakeApiServer();
    const a = lead(clock, server, 'a');
    await settle();
    expect(a.fence.check().ok).to.equal(true);
    await clock.advance(25_000); // renewed every 2 s
    expect(a.fence.check().ok).to.equal(true);
    a.stop.abort();
    expect(await a.end).to.equal('stopped');
    expect(a.fence.check().ok).to.equal(false);
    expect(server.read<Lease>(LEASES, 'staticsite-controller')?.spec?.holderIdentity).to.equal('');
  });

  it('a clean stop: the reconciles winding down may still write until the renew deadline, not after', async () => {
    const clock = new ManualClock();
    const server = new FakeApiServer();
    const fence = fenceOn(clock);
    const verdicts: boolean[] = [];
    const elector = new LeaseElector({
      api: new KubeApi(server),
      clock,
      logger: silentLogger(),
      namespace: 'sys',
      name: 'staticsite-controller',
      identity: 'a',
      fence,
    });
    const stop = new AbortController();
    const end = elector.run(stop.signal, async (leading) => {
      await new Promise<void>((resolve) => leading.addEventListener('abort', () => resolve(), { once: true }));
      // A reconcile finishing during the shutdown grace.
      verdicts.push(fence.check().ok);
      await clock.advance(RENEW_DEADLINE_MS);
      verdicts.push(fence.check().ok);
    });
    await settle();
    stop.abort();
    expect(await end).to.equal('stopped');
    expect(verdicts).to.deep.equal([true, false]);
    expect(fence.check().ok).to.equal(false);
  });

  it('a process resumed after a pause past its lease: its first write is refused and leading ends at once, before any timer runs', async () => {
    const clock = new ManualClock();
    const server = new FakeApiServer();
    const a = lead(clock, server, 'a');
    await settle();
    expect(a.leading?.aborted).to.equal(false);
    clock.stall(16_000); // SIGSTOP for 16 s (lease 15 s); no timer has fired yet on resume
    expect(() => a.fence.assertMayWrite('PUT /api/v1/namespaces/s/configmaps/site')).to.throw(
      FencedError,
      'was last renewed 16.0 s ago',
    );
    expect(a.leading?.aborted).to.equal(true);
    expect(a.leading?.reason).to.equal('lost');
    expect(a.elector.isLeader()).to.equal(false);
    expect(await a.end).to.equal('lost');
  });

  it('the same pause without a write: the deadline timer ends leading as soon as the process runs', async () => {
    const clock = new ManualClock();
    const server = new FakeApiServer();
    const a = lead(clock, server, 'a');
    await settle();
    clock.stall(16_000);
    await clock.advance(0);
    expect(a.leading?.reason).to.equal('lost');
    expect(await a.end).to.equal('lost');
    expect(a.fence.check().ok).to.equal(false);
  });

  it('a renewal hung on the wire is abandoned at the deadline: leading does not wait for it', async () => {
    const clock = new ManualClock();
    const server = new FakeApiServer();
    const a = lead(clock, server, 'a');
    await settle();
    // Every later Lease request hangs until its signal aborts (a partition that drops packets).
    server.hang((r) => r.path.startsWith(LEASES));
    await clock.advance(RENEW_DEADLINE_MS - 1);
    expect(a.leading?.aborted).to.equal(false);
    await clock.advance(1);
    expect(a.leading?.reason).to.equal('lost');
    expect(await a.end).to.equal('lost');
  });
});

describe('fencing: the record stores write nothing the fence refuses', () => {
  it('file store: no record file is created, replaced or deleted', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'staticsite-fence-'));
    try {
      const clock = new ManualClock();
      const fence = fenceOn(clock);
      const store = await createRecordStore({ kind: 'dir', dir }, undefined, fence);
      const record = { hostname: 'a.example.com', service: 'a.s.svc.cluster.local', port: 80, site: 's/a' };
      expect(isFenced(await store.publish('s/a', record).catch((e) => e))).to.equal(true);
      expect(await readdir(dir)).to.deep.equal([]);
      await writeFile(join(dir, 's_b.json'), '{}\n');
      expect(isFenced(await store.remove('s/b').catch((e) => e))).to.equal(true);
      expect(await readdir(dir)).to.deep.equal(['s_b.json']);
      fence.renewed(clock.monotonic());
      expect(await store.publish('s/a', record)).to.equal('created');
      expect(await store.remove('s/b')).to.equal('removed');
      // The unfenced store is the same store: nothing but the fence decided.
      expect(await new FileRecordStore(dir, nodeFileSystem).remove('s/a')).to.equal('removed');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('DNS store: no UPDATE leaves; queries and transfers pass', async () => {
    const sent: string[] = [];
    const dns: DnsTransport = {
      update: async (_message, what) => {
        sent.push(`update ${what}`);
      },
      serial: async () => {
        sent.push('serial');
        return 1;
      },
      transfer: async () => {
        sent.push('transfer');
        return { serial: 1, records: [] };
      },
    };
    const fenced = fencedDnsTransport(dns, fenceOn(new ManualClock()));
    expect(isFenced(await fenced.update(Buffer.alloc(0), 'add a.example.com').catch((e) => e))).to.equal(true);
    await fenced.serial('example.com');
    await fenced.transfer('example.com');
    expect(sent).to.deep.equal(['serial', 'transfer']);
  });
});
