import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { load } from 'js-yaml';
import {
  admissionConfigurationYaml,
  checkWebhookHosts,
  currentCa,
  issueApiServerClientCertificate,
  webhookKubeconfigYaml,
} from '../../certs/apiserver-client.ts';
import { createCertificateAuthority, issueCertificate, type KeyPair } from '../../certs/x509.ts';
import { run } from '../../cli/main.ts';
import { clientCaFile } from '../../cli/webhook-command.ts';
import { Probes } from '../../observability/probes-server.ts';
import type { RunningWebhook } from '../../webhook/server.ts';
import { readClientCa } from '../../webhook/tls/client-ca.ts';
import { CredentialsReloader } from '../../webhook/tls/credentials-reloader.ts';
import { CredentialsError, readServingCredentials } from '../../webhook/tls/serving-credentials.ts';
import { startLoopbackWebhook } from '../support/loopback-servers.ts';

const notBefore = new Date(Date.now() - 60_000);
const ca = (commonName: string) => createCertificateAuthority({ commonName, notBefore, validityDays: 2 });
const servingCa = ca('serving-ca');
const leaf = (authority: KeyPair, usage: 'serverAuth' | 'clientAuth') =>
  issueCertificate({
    ca: authority,
    commonName: usage === 'serverAuth' ? 'w' : 'caller',
    subjectAltNames: usage === 'serverAuth' ? ['127.0.0.1'] : [],
    usage,
    notBefore,
    validityDays: 1,
  });
const quiet = { info() {}, warn() {} };

async function failure(promise: Promise<unknown>): Promise<Error | undefined> {
  return promise.then(
    () => undefined,
    (error: Error) => error,
  );
}

/** POST / to the webhook port: the HTTP status, or the connection's error code. */
function call(port: number, client?: KeyPair): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/validate',
        method: 'POST',
        ca: servingCa.certPem,
        agent: false,
        headers: { 'content-type': 'application/json' },
        ...(client ? { cert: client.certPem, key: client.keyPem } : {}),
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    req.end('{}');
  });
}

describe('webhook --client-ca', () => {
  let dir: string;
  let certDir: string;
  let caFile: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'staticsite-client-ca-'));
    certDir = dir;
    caFile = join(dir, 'client-ca.crt');
    const serving = leaf(servingCa, 'serverAuth');
    await writeFile(join(dir, 'tls.crt'), serving.certPem);
    await writeFile(join(dir, 'tls.key'), serving.keyPem);
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  describe('the flag', () => {
    it('absent: undefined (server TLS only); empty: a usage error', () => {
      expect(clientCaFile(undefined)).to.equal(undefined);
      expect(clientCaFile('/etc/ca.crt')).to.equal('/etc/ca.crt');
      expect(() => clientCaFile(' ')).to.throw('--client-ca needs a file of PEM CA certificates');
    });

    it('a file that cannot be read: one line naming it on stderr and exit 1', async () => {
      const err: string[] = [];
      const args = ['webhook', '--cert-dir', certDir, '--client-ca', caFile, '--port', '0', '--metrics-port', '0'];
      const code = await run(args, { stdout: () => {}, stderr: (t) => err.push(t) });
      expect(code).to.equal(1);
      expect(err.join('')).to.equal(`staticsite webhook: cannot read ${caFile}: no such file\n`);
    });
  });

  describe('reading the file', () => {
    const fs = { readFile: (path: string) => import('node:fs/promises').then((f) => f.readFile(path, 'utf8')) };
    const broken: Array<[string, () => string, string]> = [
      ['no PEM certificate', () => 'garbage', 'does not hold a PEM certificate'],
      ['a leaf, not a CA', () => leaf(servingCa, 'clientAuth').certPem, 'certificate 1 (CN=caller) is not a CA'],
      [
        'a bad block after a good one',
        () => `${servingCa.certPem}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`,
        'certificate 2 does not parse',
      ],
    ];
    for (const [what, content, message] of broken) {
      it(`${what}: a CredentialsError naming the file`, async () => {
        await writeFile(caFile, content());
        const error = await failure(readClientCa(fs, caFile));
        expect(error).to.be.instanceOf(CredentialsError);
        expect(error?.message).to.include(caFile).and.to.include(message);
      });
    }

    it('a bundle of two CAs: both fingerprints', async () => {
      await writeFile(caFile, servingCa.certPem + ca('second').certPem);
      expect((await readClientCa(fs, caFile)).fingerprints).to.have.length(2);
    });
  });

  it('the reloader hands over a changed CA, keeps the old one while the file is broken, and says why', async () => {
    const fs = await import('node:fs/promises');
    const first = ca('first');
    await writeFile(caFile, first.certPem);
    const reloaded: string[] = [];
    const reloader = new CredentialsReloader(await readServingCredentials(fs, certDir), {
      dir: certDir,
      logger: quiet,
      onReload: () => reloaded.push('serving'),
      clientCa: { file: caFile, initial: await readClientCa(fs, caFile), onReload: (c) => reloaded.push(c.pem) },
      watchDir: () => ({ close() {} }),
      setInterval: () => ({}),
      clearInterval: () => {},
    });
    await reloader.check();
    expect(reloaded).to.deep.equal([]);
    await writeFile(caFile, 'half-written');
    await reloader.check();
    expect(reloaded).to.deep.equal([]);
    expect(reloader.clientCa?.pem).to.equal(first.certPem);
    expect(reloader.clientCaProblem).to.include(`${caFile} does not hold a PEM certificate`);
    const second = ca('second');
    await writeFile(caFile, second.certPem);
    await reloader.check();
    expect(reloaded).to.deep.equal([second.certPem]);
    expect(reloader.clientCaProblem).to.equal(undefined);
  });

  describe('the server', () => {
    let webhook: RunningWebhook | undefined;
    afterEach(async () => {
      await webhook?.close();
      webhook = undefined;
    });

    it('refuses a caller without a certificate or with a stranger, serves one the CA signed, and reloads the CA', async () => {
      const first = ca('first');
      await writeFile(caFile, first.certPem);
      webhook = await startLoopbackWebhook(certDir, { clientCaFile: caFile, certCheckIntervalMs: 50 });
      expect(await call(webhook.port)).to.be.a('string');
      expect(await call(webhook.port, leaf(ca('stranger'), 'clientAuth'))).to.be.a('string');
      expect(await call(webhook.port, leaf(first, 'clientAuth'))).to.equal(400);
      const probes = new Probes({ ready: webhook.readiness });
      expect(probes.answer('/readyz?verbose')?.body).to.include('[+]client-ca ok');

      await writeFile(caFile, 'broken');
      await waitUntil(() => !!probes.answer('/readyz?verbose')?.body.includes('[-]client-ca failed'));
      expect(await call(webhook.port, leaf(first, 'clientAuth'))).to.equal(400);

      const second = ca('second');
      await writeFile(caFile, second.certPem);
      await waitUntil(() => !!probes.answer('/readyz?verbose')?.body.includes('[+]client-ca ok'));
      expect(await call(webhook.port, leaf(second, 'clientAuth'))).to.equal(400);
      expect(await call(webhook.port, leaf(first, 'clientAuth'))).to.be.a('string');
    });

    it('without the flag: no certificate is asked for, and no client-ca check', async () => {
      webhook = await startLoopbackWebhook(certDir);
      expect(await call(webhook.port)).to.equal(400);
      expect(webhook.readiness.map((check) => check.name)).not.to.include('client-ca');
    });
  });
});

async function waitUntil(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('certs: the API server client files', () => {
  const authority = ca('webhook-ca');
  const client = issueApiServerClientCertificate(authority, 30);

  it('a clientAuth certificate the CA signed', async () => {
    const { X509Certificate } = await import('node:crypto');
    const cert = new X509Certificate(client.certPem);
    expect(cert.checkIssued(new X509Certificate(authority.certPem))).to.equal(true);
    expect(cert.keyUsage).to.deep.equal(['1.3.6.1.5.5.7.3.2']);
  });

  it('the kubeconfig: one user per webhook host, each with the certificate and key', () => {
    const config = load(webhookKubeconfigYaml(['staticsite-webhook.staticsite-system.svc', '127.0.0.1:8443'], client));
    expect(config).to.deep.include({ apiVersion: 'v1', kind: 'Config' });
    const users = (config as { users: Array<{ name: string; user: Record<string, string> }> }).users;
    expect(users.map((u) => u.name)).to.deep.equal(['staticsite-webhook.staticsite-system.svc', '127.0.0.1:8443']);
    expect(Buffer.from(users[0]?.user['client-certificate-data'] ?? '', 'base64').toString()).to.equal(client.certPem);
    expect(Buffer.from(users[0]?.user['client-key-data'] ?? '', 'base64').toString()).to.equal(client.keyPem);
  });

  it('the AdmissionConfiguration: both webhook plugins, an absolute kubeConfigFile', () => {
    expect(load(admissionConfigurationYaml('/etc/kubernetes/webhook.kubeconfig'))).to.deep.equal({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AdmissionConfiguration',
      plugins: ['ValidatingAdmissionWebhook', 'MutatingAdmissionWebhook'].map((name) => ({
        name,
        configuration: {
          apiVersion: 'apiserver.config.k8s.io/v1',
          kind: 'WebhookAdmissionConfiguration',
          kubeConfigFile: '/etc/kubernetes/webhook.kubeconfig',
        },
      })),
    });
    expect(() => admissionConfigurationYaml('webhook.kubeconfig')).to.throw('must be an absolute path');
  });

  it('webhook hosts: the names the API server looks up', () => {
    for (const host of ['staticsite-webhook.staticsite-system.svc', '*.staticsite-system.svc', '127.0.0.1:8443', '*']) {
      expect(() => checkWebhookHosts([host]), host).not.to.throw();
    }
    for (const host of ['https://x.svc', 'a b', '']) {
      expect(() => checkWebhookHosts([host]), host).to.throw('--webhook-host');
    }
    expect(() => checkWebhookHosts([])).to.throw('at least one --webhook-host');
  });

  it('the current CA of a bundle is the one its key belongs to', () => {
    const old = ca('old');
    const where = { cert: 'ca.crt', key: 'ca.key' };
    const found = currentCa(old.certPem + authority.certPem, authority.keyPem, where);
    expect(found.certPem.trim()).to.equal(authority.certPem.trim());
    expect(() => currentCa(old.certPem, authority.keyPem, where)).to.throw('ca.key belongs to none of');
  });
});

describe('cli: staticsite certs apiserver-client', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'staticsite-apiserver-client-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  async function cli(...args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await run(args, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
    return { code, stdout: out.join(''), stderr: err.join('') };
  }

  it('from a bootstrap --out-dir: the four files, the key and kubeconfig 0600, the client cert from the current CA', async () => {
    const caDir = join(dir, 'ca');
    const bootstrap = await cli('certs', 'bootstrap', '--service=w', '--namespace=ns', `--out-dir=${caDir}`);
    expect(bootstrap.code, bootstrap.stderr).to.equal(0);
    const out = join(dir, 'out');
    const result = await cli(
      'certs',
      'apiserver-client',
      `--ca-dir=${caDir}`,
      `--out-dir=${out}`,
      '--webhook-host=w.ns.svc',
      '--kubeconfig-path=/etc/kubernetes/staticsite/webhook-client.kubeconfig',
    );
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.include(`--client-ca ${join(caDir, 'ca.crt')}`);
    for (const [name, mode] of [
      ['apiserver-client.key', 0o600],
      ['webhook-client.kubeconfig', 0o600],
      ['apiserver-client.crt', 0o644],
      ['admission-configuration.yaml', 0o644],
    ] as const) {
      expect((await stat(join(out, name))).mode & 0o777, name).to.equal(mode);
    }
    expect(await readFile(join(out, 'admission-configuration.yaml'), 'utf8')).to.include(
      'kubeConfigFile: /etc/kubernetes/staticsite/webhook-client.kubeconfig',
    );
    const { X509Certificate } = await import('node:crypto');
    const client = new X509Certificate(await readFile(join(out, 'apiserver-client.crt')));
    expect(client.checkIssued(new X509Certificate(await readFile(join(caDir, 'ca.crt'))))).to.equal(true);
  });

  it('without --webhook-host: a usage error (exit 2); a missing CA dir: exit 1 naming the file', async () => {
    const none = await cli('certs', 'apiserver-client', `--ca-dir=${dir}`, `--out-dir=${dir}/out`);
    expect(none.code).to.equal(2);
    expect(none.stderr).to.include('--webhook-host is required');
    const missing = await cli(
      'certs',
      'apiserver-client',
      `--ca-dir=${dir}/nope`,
      `--out-dir=${dir}/out`,
      '--webhook-host=*',
    );
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include(`cannot read ${join(dir, 'nope', 'ca.crt')}: no such file`);
  });
});
