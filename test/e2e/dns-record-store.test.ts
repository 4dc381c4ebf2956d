import { expect } from 'chai';
import { DnsClient } from '../../controller/records/dns/client.ts';
import { DnsRecordStore } from '../../controller/records/dns/dns-record-store.ts';
import { BindServer } from '../../devenv/dns/bind.ts';

const record = (hostname: string, site = 'web/shop') => ({
  hostname,
  service: `${site.split('/')[1]}.${site.split('/')[0]}.svc.cluster.local`,
  port: 80,
  site,
});

/** The DNS record store against Debian's BIND 9, checked with dig as a user would. */
describe('e2e: DNS records by RFC 2136 UPDATE + TSIG against a real BIND 9', function () {
  this.timeout(60_000);
  const bind = new BindServer();
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
    let error: Error | undefined;
    try {
      await store.publish('web/other', record('taken.sites.staticsite.dev', 'web/other'));
    } catch (e) {
      error = e as Error;
    }
    expect(error?.message).to.equal(
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

  it('a wrong key is refused by the server and named in the error', async () => {
    const wrong = new DnsRecordStore(
      new DnsClient({
        server: { host: '127.0.0.1', port: bind.port },
        key: { name: bind.keyName, secret: Buffer.alloc(32) },
      }),
      { zone: bind.zone, owner: 'test-cluster' },
    );
    let error: Error | undefined;
    try {
      await wrong.publish('web/x', record('x.sites.staticsite.dev', 'web/x'));
    } catch (e) {
      error = e as Error;
    }
    expect(error?.message).to.match(/zone transfer of sites.staticsite.dev: the DNS server answered NOTAUTH/);
  });
});
