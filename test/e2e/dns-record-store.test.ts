import { createSocket } from 'node:dgram';
import { connect, createServer, type Server } from 'node:net';
import { expect } from 'chai';
import { DnsClient, type DnsTransport } from '../../controller/records/dns/client.ts';
import { DnsRecordStore } from '../../controller/records/dns/dns-record-store.ts';
import { BindServer } from '../../devenv/dns/bind.ts';

const record = (hostname: string, site = 'web/shop') => ({
  hostname,
  service: `${site.split('/')[1]}.${site.split('/')[0]}.svc.cluster.local`,
  port: 80,
  site,
});

/**
 * A man in the middle on loopback: each DNS message BIND sends over TCP with `from` replaced by `to`
 * (the same length, so the framing holds); UDP answers relayed as they are, or with their header's
 * AD bit flipped (`flipUdpHeader`: still a well-formed NOERROR answer, no longer the signed one).
 */
async function tamperingProxy(bindPort: number, from: string, to: string, flipUdpHeader = false) {
  const tcp: Server = createServer((client) => {
    const upstream = connect(bindPort, '127.0.0.1');
    client.pipe(upstream);
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const frame = Buffer.from(pending.subarray(0, 2 + pending.readUInt16BE(0)));
        pending = pending.subarray(frame.length);
        for (let at = frame.indexOf(from); at >= 0; at = frame.indexOf(from, at + 1)) frame.write(to, at);
        client.write(frame);
      }
    });
    upstream.on('end', () => client.end());
    for (const socket of [client, upstream]) socket.on('error', () => [client, upstream].map((s) => s.destroy()));
  });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  const port = (tcp.address() as { port: number }).port;
  const udp = createSocket('udp4');
  udp.on('message', (message, sender) => {
    const relay = createSocket('udp4');
    const done = setTimeout(() => relay.close(), 3_000); // no answer: do not leak the socket
    relay.on('message', (answer) => {
      clearTimeout(done);
      if (flipUdpHeader) answer.writeUInt8(answer.readUInt8(3) ^ 0x20, 3);
      udp.send(answer, sender.port, sender.address);
      relay.close();
    });
    relay.send(message, bindPort, '127.0.0.1');
  });
  // The UDP side listens on the TCP side's port, as a DNS server does; a taken port fails the test, named.
  await new Promise<void>((resolve, reject) => {
    udp.once('error', (error) => reject(new Error(`the proxy's UDP port ${port}: ${error.message}`)));
    udp.bind(port, '127.0.0.1', resolve);
  });
  return {
    port,
    close: async () => {
      udp.close();
      await new Promise((resolve) => tcp.close(resolve));
    },
  };
}

/** The message a call fails with, or undefined when it succeeds. */
async function failure(call: Promise<unknown>): Promise<string | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** The real client, counting the zone transfers and SOA queries the store asks of it. */
function counting(inner: DnsTransport) {
  const calls = { transfers: 0, serials: 0 };
  const transport: DnsTransport = {
    update: (message, what) => inner.update(message, what),
    serial: (zone) => {
      calls.serials++;
      return inner.serial(zone);
    },
    transfer: (zone) => {
      calls.transfers++;
      return inner.transfer(zone);
    },
  };
  return { transport, calls };
}

/** The DNS record store against Debian's BIND 9, checked with dig as a user would. */
describe('e2e: DNS records by RFC 2136 UPDATE + TSIG against a real BIND 9', function () {
  this.timeout(60_000);
  // Small transfer messages: a zone transfer of more than a few records arrives in several messages,
  // each signed on its own (RFC 8945 section 5.3.1), and every transfer here checks them all.
  const bind = new BindServer({ transferMessageSize: 512 });
  let store: DnsRecordStore;
  let client: DnsClient;

  before(async () => {
    await bind.start();
    client = new DnsClient({
      server: { host: '127.0.0.1', port: bind.port },
      key: { name: bind.keyName, secret: bind.secret },
    });
    store = new DnsRecordStore(client, { zone: bind.zone, owner: 'test-cluster' });
  });
  after(async () => bind.dispose());

  it('publishes the hostname as a CNAME to the Service, with its ownership record; again is unchanged', async () => {
    expect(await store.publish('web/shop', record('shop.web.sites.staticsite.dev'))).to.equal('created');
    expect(await bind.dig('shop.web.sites.staticsite.dev', 'CNAME')).to.deep.equal(['shop.web.svc.cluster.local.']);
    expect(await bind.dig('cname-shop.web.sites.staticsite.dev', 'TXT')).to.deep.equal([
      '"heritage=staticsite-operator,staticsite-operator/owner=test-cluster,staticsite-operator/resource=staticsite/web/shop"',
    ]);
    expect(await store.publish('web/shop', record('shop.web.sites.staticsite.dev'))).to.equal('unchanged');
  });

  it('a hostname change: the new name appears, the old one is gone', async () => {
    expect(await store.publish('web/shop', record('www.shop.sites.staticsite.dev'))).to.equal('updated');
    expect(await bind.dig('www.shop.sites.staticsite.dev', 'CNAME')).to.deep.equal(['shop.web.svc.cluster.local.']);
    expect(await bind.dig('shop.web.sites.staticsite.dev', 'ANY')).to.deep.equal([]);
    expect(await bind.dig('cname-shop.web.sites.staticsite.dev', 'TXT')).to.deep.equal([]);
  });

  it('remove deletes both records; removing again is success (absent)', async () => {
    expect(await store.remove('web/shop')).to.equal('removed');
    expect(await bind.dig('www.shop.sites.staticsite.dev', 'ANY')).to.deep.equal([]);
    expect(await bind.dig('cname-www.shop.sites.staticsite.dev', 'TXT')).to.deep.equal([]);
    expect(await store.remove('web/shop')).to.equal('absent');
  });

  it('never changes or deletes a name it does not own', async () => {
    // Someone else's record, written by nsupdate with the zone's key (as another tool sharing it would).
    await bind.nsupdate(['taken.sites.staticsite.dev 300 CNAME elsewhere.example.']);
    expect(await failure(store.publish('web/other', record('taken.sites.staticsite.dev', 'web/other')))).to.equal(
      'taken.sites.staticsite.dev already exists in zone sites.staticsite.dev and is not owned by StaticSite web/other (no ownership record at cname-taken.sites.staticsite.dev names it): left untouched',
    );
    expect(await store.remove('web/other')).to.equal('absent');
    expect(await bind.dig('taken.sites.staticsite.dev', 'CNAME')).to.deep.equal(['elsewhere.example.']);
    // Another owner's ownership record is not ours either, even for the same site name.
    const theirs = new DnsRecordStore(client, { zone: bind.zone, owner: 'other-cluster' }).ownershipText('web/shop');
    await bind.nsupdate([
      `cname-theirs.sites.staticsite.dev 300 TXT "${theirs}"`,
      'theirs.sites.staticsite.dev 300 CNAME shop.web.svc.cluster.local.',
    ]);
    expect(await store.remove('web/shop')).to.equal('absent');
    expect(await bind.dig('theirs.sites.staticsite.dev', 'CNAME')).to.deep.equal(['shop.web.svc.cluster.local.']);
  });

  describe('behind a Gateway: the records of its addresses', () => {
    const host = 'gw.web.sites.staticsite.dev';
    const txt = (type: string) => bind.dig(`${type}-${host}`, 'TXT');
    const ownership = [
      '"heritage=staticsite-operator,staticsite-operator/owner=test-cluster,staticsite-operator/resource=staticsite/web/gw"',
    ];
    const behind = (...addresses: Array<[string, string]>) => ({
      ...record(host, 'web/gw'),
      via: {
        kind: 'Gateway' as const,
        name: 'gateway-system/public',
        addresses: addresses.map(([type, value]) => ({ type, value })),
      },
    });

    it('IP addresses: A and AAAA records, each type with its ownership record; the same again is unchanged', async () => {
      const gateway = behind(
        ['IPAddress', '192.0.2.10'],
        ['IPAddress', '2001:db8:0:0::a'],
        ['IPAddress', '192.0.2.9'],
        ['Hostname', 'lb.example.net'],
        ['example.net/custom', 'ignored'],
      );
      expect(await store.publish('web/gw', gateway)).to.equal('created');
      expect(await bind.dig(host, 'A')).to.have.members(['192.0.2.9', '192.0.2.10']);
      expect(await bind.dig(host, 'AAAA')).to.deep.equal(['2001:db8::a']);
      expect(await bind.dig(host, 'CNAME')).to.deep.equal([]);
      expect(await txt('a')).to.deep.equal(ownership);
      expect(await txt('aaaa')).to.deep.equal(ownership);
      expect(await txt('cname')).to.deep.equal([]);
      expect(await store.publish('web/gw', gateway)).to.equal('unchanged');
    });

    it('the addresses change, then only a hostname is left: the records and their ownership records follow', async () => {
      expect(await store.publish('web/gw', behind(['IPAddress', '192.0.2.11']))).to.equal('updated');
      expect(await bind.dig(host, 'A')).to.deep.equal(['192.0.2.11']);
      expect(await bind.dig(host, 'AAAA')).to.deep.equal([]);
      expect(await txt('aaaa')).to.deep.equal([]);
      expect(await store.publish('web/gw', behind(['Hostname', 'lb.example.net']))).to.equal('updated');
      // Nothing else at the name: the CNAME alone (a query for A would follow it).
      expect(await bind.dig(host, 'ANY')).to.deep.equal(['lb.example.net.']);
      expect(await txt('a')).to.deep.equal([]);
      expect(await txt('cname')).to.deep.equal(ownership);
      // The route gone (no --gateway any more): the Service's name again.
      expect(await store.publish('web/gw', record(host, 'web/gw'))).to.equal('updated');
      expect(await bind.dig(host, 'CNAME')).to.deep.equal(['gw.web.svc.cluster.local.']);
    });

    it('remove deletes the records of every type with their ownership records', async () => {
      expect(await store.publish('web/gw', behind(['IPAddress', '192.0.2.12'], ['IPAddress', '2001:db8::c']))).to.equal(
        'updated',
      );
      expect(await store.remove('web/gw')).to.equal('removed');
      for (const type of ['A', 'AAAA', 'CNAME'] as const) expect(await bind.dig(host, type)).to.deep.equal([]);
      for (const type of ['a', 'aaaa', 'cname']) expect(await txt(type)).to.deep.equal([]);
    });

    it('an ownership name of another owner is left as it is, and so is the hostname', async () => {
      const theirs = new DnsRecordStore(client, { zone: bind.zone, owner: 'other-cluster' }).ownershipText('web/gw');
      await bind.nsupdate([`a-${host} 300 TXT "${theirs}"`]);
      expect(await failure(store.publish('web/gw', behind(['IPAddress', '192.0.2.13'])))).to.equal(
        `${host} already exists in zone sites.staticsite.dev and is not owned by StaticSite web/gw (no ownership record at a-${host} names it): left untouched`,
      );
      expect(await bind.dig(host, 'A')).to.deep.equal([]);
      // Owned as a CNAME, then an address whose ownership name someone else holds: nothing changes.
      expect(await store.publish('web/gw', record(host, 'web/gw'))).to.equal('created');
      expect(await failure(store.publish('web/gw', behind(['IPAddress', '192.0.2.13'])))).to.equal(
        `a-${host} already exists in zone sites.staticsite.dev and does not name StaticSite web/gw: ${host} left as it is`,
      );
      expect(await bind.dig(host, 'CNAME')).to.deep.equal(['gw.web.svc.cluster.local.']);
      expect(await store.remove('web/gw')).to.equal('removed');
      expect(await bind.dig(`a-${host}`, 'TXT')).to.deep.equal([`"${theirs}"`]);
    });

    it('a Gateway without an IP address or a hostname: an error naming it, the zone untouched', async () => {
      expect(await failure(store.publish('web/gw', behind(['example.net/custom', 'x'])))).to.equal(
        'Gateway gateway-system/public has no IP address or hostname in status.addresses',
      );
      expect(await bind.dig(host, 'ANY')).to.deep.equal([]);
    });
  });

  it('a wrong key is refused by the server, and its TSIG error named: a wrong secret BADSIG, an unknown name BADKEY', async () => {
    const refusal = async (key: { name: string; secret: Buffer }) => {
      const store = new DnsRecordStore(new DnsClient({ server: { host: '127.0.0.1', port: bind.port }, key }), {
        zone: bind.zone,
        owner: 'test-cluster',
      });
      return failure(store.publish('web/x', record('x.sites.staticsite.dev', 'web/x')));
    };
    expect(await refusal({ name: bind.keyName, secret: Buffer.alloc(32) })).to.equal(
      'the SOA query for sites.staticsite.dev: the DNS server answered NOTAUTH (TSIG error BADSIG)',
    );
    expect(await refusal({ name: 'nobody', secret: bind.secret })).to.equal(
      'the SOA query for sites.staticsite.dev: the DNS server answered NOTAUTH (TSIG error BADKEY)',
    );
  });

  it('a settled site costs one SOA query and no zone transfer; any change to the zone, ours or not, is seen', async () => {
    const { transport, calls } = counting(client);
    let now = Date.now();
    const cached = new DnsRecordStore(transport, { zone: bind.zone, owner: 'test-cluster', now: () => now });
    const site = record('cached.sites.staticsite.dev', 'web/cached');
    expect(await cached.publish('web/cached', site)).to.equal('created');
    expect(await cached.publish('web/cached', site)).to.equal('unchanged'); // our create moved the serial
    const settled = { ...calls };
    for (let i = 0; i < 3; i++) expect(await cached.publish('web/cached', site)).to.equal('unchanged');
    expect(calls).to.deep.equal({ transfers: settled.transfers, serials: settled.serials + 3 });
    // A transfer is reused for a minute at most, whatever the serial says.
    now += 61_000;
    expect(await cached.publish('web/cached', site)).to.equal('unchanged');
    expect(calls.transfers).to.equal(settled.transfers + 1);
    settled.transfers++;
    // Someone else deletes our name behind our back: the serial moves, the next publish transfers and puts it back.
    await bind.nsupdate(['cached.sites.staticsite.dev CNAME'], 'delete');
    expect(await bind.dig('cached.sites.staticsite.dev', 'CNAME')).to.deep.equal([]);
    expect(await cached.publish('web/cached', site)).to.equal('updated');
    expect(calls.transfers).to.equal(settled.transfers + 1);
    expect(await bind.dig('cached.sites.staticsite.dev', 'CNAME')).to.deep.equal(['cached.web.svc.cluster.local.']);
    expect(await cached.remove('web/cached')).to.equal('removed');
  });

  it('a garbled answer is an error naming the query, not a crash', async () => {
    // A "server" that answers every query with its ID and three bytes of nothing.
    const garbler = createSocket('udp4');
    garbler.on('message', (query, sender) =>
      garbler.send(Buffer.concat([query.subarray(0, 2), Buffer.from([1, 2, 3])]), sender.port, sender.address),
    );
    await new Promise<void>((resolve) => garbler.bind(0, '127.0.0.1', resolve));
    const port = garbler.address().port;
    const store = new DnsRecordStore(
      new DnsClient({ server: { host: '127.0.0.1', port }, key: { name: bind.keyName, secret: bind.secret } }),
      { zone: bind.zone, owner: 'test-cluster' },
    );
    try {
      expect(await failure(store.publish('web/x', record('x.sites.staticsite.dev', 'web/x')))).to.match(
        /^the SOA query for sites.staticsite.dev: the DNS server's answer is malformed \(.+\)$/,
      );
    } finally {
      garbler.close();
    }
  });

  it('an answer over UDP altered on the way is refused: its MAC is checked', async () => {
    const proxy = await tamperingProxy(bind.port, 'no-such-text', 'no-such-text', true);
    try {
      const store = new DnsRecordStore(
        new DnsClient({
          server: { host: '127.0.0.1', port: proxy.port },
          key: { name: bind.keyName, secret: bind.secret },
        }),
        { zone: bind.zone, owner: 'test-cluster' },
      );
      expect(await failure(store.remove('web/anything'))).to.equal(
        'the SOA query for sites.staticsite.dev: a message of the answer does not carry a valid TSIG signature',
      );
    } finally {
      await proxy.close();
    }
  });

  it('a zone transfer garbled on the way fails that transfer, not the process', async () => {
    // The length byte of the label "sites" made 63: the names run past their ends.
    const proxy = await tamperingProxy(bind.port, '\x05sites', '\x3fsites');
    try {
      const store = new DnsRecordStore(
        new DnsClient({
          server: { host: '127.0.0.1', port: proxy.port },
          key: { name: bind.keyName, secret: bind.secret },
        }),
        { zone: bind.zone, owner: 'test-cluster' },
      );
      expect(await failure(store.remove('web/anything'))).to.match(
        new RegExp(`^zone transfer of sites.staticsite.dev from 127.0.0.1:${proxy.port}: .+`),
      );
    } finally {
      await proxy.close();
    }
  });

  it('concurrent publishes on a cold store share one zone transfer', async () => {
    const { transport, calls } = counting(client);
    const writer = new DnsRecordStore(client, { zone: bind.zone, owner: 'test-cluster' });
    const sites = ['one', 'two', 'three', 'four', 'five'].map((n) => record(`${n}.sites.staticsite.dev`, `web/${n}`));
    for (const site of sites) expect(await writer.publish(site.site, site)).to.equal('created');
    const cold = new DnsRecordStore(transport, { zone: bind.zone, owner: 'test-cluster' });
    const outcomes = await Promise.all(sites.map((site) => cold.publish(site.site, site)));
    expect(outcomes).to.deep.equal(sites.map(() => 'unchanged'));
    expect(calls).to.deep.equal({ transfers: 1, serials: 5 });
    for (const site of sites) expect(await writer.remove(site.site)).to.equal('removed');
  });

  it('a zone transfer altered on the way is refused: a forged ownership record makes it delete nothing', async function () {
    // Another cluster's record; on the way, its owner is rewritten to this store's owner.
    const theirs = new DnsRecordStore(client, { zone: bind.zone, owner: 'test-clustex' }).ownershipText('web/forged');
    // Names that come before the forged ones in the zone, so the forgery lands in a later message.
    await bind.nsupdate(
      Array.from({ length: 30 }, (_, i) => `a-filler-${i}.sites.staticsite.dev 300 TXT "filler ${i}"`),
    );
    await bind.nsupdate([
      `cname-forged.sites.staticsite.dev 300 TXT "${theirs}"`,
      'forged.sites.staticsite.dev 300 CNAME forged.web.svc.cluster.local.',
    ]);
    const size = await bind.transferSize();
    expect(size.messages).to.be.greaterThan(3);
    if (this.test) this.test.title += ` [${size.records} records in ${size.messages} messages]`;
    const proxy = await tamperingProxy(bind.port, 'test-clustex', 'test-cluster');
    const through = (port: number) =>
      new DnsRecordStore(
        new DnsClient({ server: { host: '127.0.0.1', port }, key: { name: bind.keyName, secret: bind.secret } }),
        { zone: bind.zone, owner: 'test-cluster' },
      );
    try {
      expect(await failure(through(proxy.port).remove('web/forged'))).to.equal(
        `zone transfer of sites.staticsite.dev from 127.0.0.1:${proxy.port}: a message of the answer does not carry a valid TSIG signature`,
      );
      expect(await bind.dig('forged.sites.staticsite.dev', 'CNAME')).to.deep.equal(['forged.web.svc.cluster.local.']);
      // The same proxy passes an unaltered transfer: nothing but the forgery is refused.
      const honest = await tamperingProxy(bind.port, 'no-such-text', 'no-such-text');
      try {
        expect(await through(honest.port).remove('web/forged')).to.equal('absent');
      } finally {
        await honest.close();
      }
    } finally {
      await proxy.close();
    }
  });
});
