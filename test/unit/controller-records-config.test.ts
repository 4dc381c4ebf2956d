import { expect } from 'chai';
import { parseRecordsFlag, parseTsigKey } from '../../controller/records/records-config.ts';

describe('controller: records configuration', () => {
  it('reads a key file as tsig-keygen writes it (BIND 9.18)', () => {
    // tsig-keygen -a hmac-sha256 staticsite-controller
    const key = parseTsigKey(
      'key "staticsite-controller" {\n\talgorithm hmac-sha256;\n\tsecret "c3RhdGljc2l0ZS1vcGVyYXRvci10c2lnLXRlc3Qta2V5IQ==";\n};\n',
      'tsig.key',
    );
    expect(key.name).to.equal('staticsite-controller');
    expect(key.secret.toString()).to.equal('staticsite-operator-tsig-test-key!');
  });

  it('refuses other algorithms and keys without a secret, naming the file', () => {
    expect(() => parseTsigKey('key "k" { algorithm hmac-md5; secret "AAAA"; };', 'k.key')).to.throw(
      'k.key: algorithm hmac-md5; only hmac-sha256 is supported',
    );
    expect(() => parseTsigKey('key "k" { algorithm hmac-sha256; };', 'k.key')).to.throw(
      'k.key: the key has no base64 secret',
    );
    expect(() => parseTsigKey('nothing here', 'k.key')).to.throw('k.key: no key "NAME" { … } block');
  });

  it('parses dir:DIR and dns:HOST:PORT, with IPv6 in brackets', () => {
    expect(parseRecordsFlag('dir:/var/lib/records', { owner: 'o' })).to.deep.equal({
      kind: 'dir',
      dir: '/var/lib/records',
    });
    expect(parseRecordsFlag('dns:[fd00::53]:5353', { zone: 'z.example', tsigKeyFile: '/k', owner: 'o' })).to.deep.equal(
      {
        kind: 'dns',
        host: 'fd00::53',
        port: 5353,
        zone: 'z.example',
        tsigKeyFile: '/k',
        owner: 'o',
      },
    );
  });
});
