import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createCertificateAuthority, issueCertificate } from '../../certs/x509.ts';
import { run } from '../../cli/main.ts';
import { CredentialsReloader } from '../../webhook/tls/credentials-reloader.ts';
import { CredentialsError, readServingCredentials } from '../../webhook/tls/serving-credentials.ts';

const now = new Date(Date.now() - 60_000);
const ca = createCertificateAuthority({ commonName: 'test-ca', notBefore: now, validityDays: 2 });
const pair = () =>
  issueCertificate({
    ca,
    commonName: 'w',
    subjectAltNames: ['127.0.0.1'],
    usage: 'serverAuth',
    notBefore: now,
    validityDays: 1,
  });
const quiet = { info() {}, warn() {} };

describe('webhook: serving credentials from --cert-dir', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'staticsite-tls-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  async function write(cert: string, key: string) {
    await writeFile(join(dir, 'tls.crt'), cert);
    await writeFile(join(dir, 'tls.key'), key);
  }

  it('reads a matching pair and its expiry', async () => {
    const p = pair();
    await write(p.certPem, p.keyPem);
    const credentials = await readServingCredentials(
      { readFile: (path, enc) => import('node:fs/promises').then((fs) => fs.readFile(path, enc)) },
      dir,
    );
    expect(credentials.notAfter.getTime()).to.be.greaterThan(Date.now());
  });

  const broken: Array<[string, () => Promise<void>, string]> = [
    ['a missing tls.crt', async () => {}, 'tls.crt: no such file'],
    [
      'a tls.crt that is not PEM',
      async () => write('garbage', pair().keyPem),
      'tls.crt does not hold a PEM certificate',
    ],
    ['a key of another cert', async () => write(pair().certPem, pair().keyPem), 'tls.key is not the private key of'],
  ];
  for (const [what, prepare, message] of broken) {
    it(`${what}: a CredentialsError naming the file`, async () => {
      await prepare();
      const fs = await import('node:fs/promises');
      const error = await readServingCredentials(fs, dir).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(CredentialsError);
      expect((error as Error).message).to.include(message);
    });
  }

  it('staticsite webhook with an unusable cert dir: one line on stderr and exit 1', async () => {
    const err: string[] = [];
    const code = await run(['webhook', '--cert-dir', dir, '--port', '0', '--metrics-port', '0'], {
      stdout: () => {},
      stderr: (t) => err.push(t),
    });
    expect(code).to.equal(1);
    expect(err.join('')).to.equal(`staticsite webhook: cannot read ${join(dir, 'tls.crt')}: no such file\n`);
  });

  it('the reloader hands over a new complete pair and skips a half-written one', async () => {
    const fs = await import('node:fs/promises');
    const first = pair();
    await write(first.certPem, first.keyPem);
    const reloaded: string[] = [];
    const reloader = new CredentialsReloader(await readServingCredentials(fs, dir), {
      dir,
      logger: quiet,
      onReload: (c) => reloaded.push(c.certPem),
      watchDir: () => ({ close() {} }),
      setInterval: () => ({}),
      clearInterval: () => {},
    });
    const second = pair();
    await writeFile(join(dir, 'tls.crt'), second.certPem); // key not written yet
    await reloader.check();
    expect(reloaded).to.deep.equal([]);
    expect(reloader.credentials.certPem).to.equal(first.certPem);
    await writeFile(join(dir, 'tls.key'), second.keyPem);
    await reloader.check();
    expect(reloaded).to.deep.equal([second.certPem]);
    await reloader.check();
    expect(reloaded).to.have.length(1);
  });
});
