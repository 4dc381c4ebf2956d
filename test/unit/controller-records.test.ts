import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { FileRecordStore, nodeFileSystem, type RecordFileSystem } from '../../controller/records/file-record-store.ts';
import { describeTarget, recordSets } from '../../controller/records/record-store.ts';

const record = { hostname: 'shop.example.com', service: 'shop.web.svc.cluster.local', port: 80, site: 'web/shop' };

describe('controller: file record store', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'records-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes one JSON file per site, hostname -> service', async () => {
    const store = new FileRecordStore(join(dir, 'records'));
    expect(await store.publish('web/shop', record)).to.equal('created');
    expect(await readdir(join(dir, 'records'))).to.deep.equal(['web_shop.json']);
    expect(JSON.parse(await readFile(join(dir, 'records', 'web_shop.json'), 'utf8'))).to.deep.equal(record);
  });

  it('writes only on a change, atomically through a temp file and a rename', async () => {
    const ops: string[] = [];
    const fs: RecordFileSystem = {
      ...nodeFileSystem,
      writeFile: async (path, data, options) => {
        ops.push(`write ${path.slice(dir.length + 1)}`);
        await nodeFileSystem.writeFile(path, data, options);
      },
      rename: async (from, to) => {
        ops.push(`rename -> ${to.slice(dir.length + 1)}`);
        await nodeFileSystem.rename(from, to);
      },
    };
    const store = new FileRecordStore(dir, fs);
    await store.publish('web/shop', record);
    expect(await store.publish('web/shop', record)).to.equal('unchanged');
    expect(await store.publish('web/shop', { ...record, hostname: 'new.example.com' })).to.equal('updated');
    expect(ops).to.have.length(4);
    expect(ops[0]).to.match(/^write \.web_shop\.json\.[0-9a-f]{12}\.tmp$/);
    expect(ops[1]).to.equal('rename -> web_shop.json');
    expect(await readdir(dir)).to.deep.equal(['web_shop.json']);
  });

  it('removes idempotently: a record already gone is success', async () => {
    const store = new FileRecordStore(dir);
    await store.publish('web/shop', record);
    expect(await store.remove('web/shop')).to.equal('removed');
    expect(await store.remove('web/shop')).to.equal('absent');
  });

  it('surfaces other file errors and leaves no temp file behind', async () => {
    const failing: RecordFileSystem = {
      ...nodeFileSystem,
      rename: async () => {
        throw Object.assign(new Error('EXDEV: cross-device link not permitted'), { code: 'EXDEV' });
      },
      unlink: async (path) => {
        if (path.endsWith('web_shop.json')) throw Object.assign(new Error('EACCES'), { code: 'EACCES' });
        await nodeFileSystem.unlink(path);
      },
    };
    const store = new FileRecordStore(dir, failing);
    const error = await store.publish('web/shop', record).catch((e: Error) => e);
    expect((error as Error).message).to.equal('EXDEV: cross-device link not permitted');
    expect(await readdir(dir)).to.deep.equal([]);
    const removeError = await store.remove('web/shop').catch((e: Error) => e);
    expect((removeError as Error).message).to.equal('EACCES');
  });
});

describe('controller: what a hostname answers (recordSets)', () => {
  const base = { hostname: 'shop.web.example.com', service: 'shop.web.svc.cluster.local', port: 80, site: 'web/shop' };
  const behind = (...addresses: Array<[string, string]>) => ({
    ...base,
    via: {
      kind: 'Gateway' as const,
      name: 'infra/public',
      addresses: addresses.map(([type, value]) => ({ type, value })),
    },
  });

  it("without a Gateway: a CNAME to the Service's cluster DNS name", () => {
    expect(recordSets(base)).to.deep.equal([{ type: 'CNAME', values: ['shop.web.svc.cluster.local'] }]);
    expect(describeTarget(base)).to.equal('shop.web.svc.cluster.local');
  });

  it('behind a Gateway: A for its IPv4 addresses, AAAA for its IPv6 ones (hostnames then ignored), each once', () => {
    const record = behind(
      ['IPAddress', '192.0.2.9'],
      ['Hostname', 'lb.example.net'],
      ['IPAddress', '2001:db8::1'],
      ['IPAddress', '192.0.2.10'],
      ['IPAddress', '192.0.2.9'],
      ['IPAddress', 'not-an-ip'],
    );
    expect(recordSets(record)).to.deep.equal([
      { type: 'A', values: ['192.0.2.10', '192.0.2.9'] },
      { type: 'AAAA', values: ['2001:db8::1'] },
    ]);
    expect(describeTarget(record)).to.equal('192.0.2.10, 192.0.2.9, 2001:db8::1 (Gateway infra/public)');
  });

  it('a Gateway with hostnames only: a CNAME to the first; with neither kind of address: an error naming it', () => {
    expect(recordSets(behind(['Hostname', 'lb.example.net'], ['Hostname', 'lb2.example.net']))).to.deep.equal([
      { type: 'CNAME', values: ['lb.example.net'] },
    ]);
    expect(() => recordSets(behind(['example.com/custom', 'x']))).to.throw(
      'Gateway infra/public has no IP address or hostname in status.addresses',
    );
  });
});
