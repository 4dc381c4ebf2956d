import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
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
import { clientCaFile, conversionPort } from '../../cli/webhook-command.ts';
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

/** A request on `port` without a client certificate: its status and Status message, or the error code. */
function answer(port: number, method: string, path: string): Promise<{ status: number; message?: string } | string> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        ca: servingCa.certPem,
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          const message = text.startsWith('{') ? (JSON.parse(text) as { message?: string }).message : undefined;
          resolve({ status: res.statusCode ?? 0, ...(message === undefined ? {} : { message }) });
        });
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    req.end(method === 'POST' ? '{}' : undefined);
  });
}

/** The SHA-256 fingerprint of the serving certificate `port` presents. */
function servedFingerprint(port: number, client?: KeyPair): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host: '127.0.0.1',
      port,
      ca: servingCa.certPem,
      ...(client ? { cert: client.certPem, key: client.keyPem } : {}),
    });
    socket.on('secureConnect', () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.destroy();
    });
    socket.on('error', reject);
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

    it('--conversion-port: 9443 with --client-ca unless given; refused without --client-ca', () => {
      expect(conversionPort(undefined, undefined)).to.equal(undefined);
      expect(conversionPort(undefined, '/etc/ca.crt')).to.equal(9443);
      expect(conversionPort('10443', '/etc/ca.crt')).to.equal(10443);
      expect(conversionPort('0', '/etc/ca.crt')).to.equal(0);
      expect(() => conversionPort('10443', undefined)).to.throw('--conversion-port needs --client-ca');
      expect(() => conversionPort('x', '/etc/ca.crt')).to.throw('--conversion-port');
    });

    it('--conversion-port without --client-ca: a usage error (exit 2)', async () => {
      const err: string[] = [];
      const args = ['webhook', '--cert-dir', certDir, '--conversion-port', '0', '--port', '0', '--metrics-port', '0'];
      const code = await run(args, { stdout: () => {}, stderr: (t) => err.push(t) });
      expect(code).to.equal(2);
      expect(err.join('')).to.include('--conversion-port needs --client-ca');
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

    it('the conversion port: /convert without a certificate, a 404 naming it for anything else, and the serving certificate reloaded on both ports', async () => {
      const first = ca('first');
      await writeFile(caFile, first.certPem);
      webhook = await startLoopbackWebhook(certDir, {
        clientCaFile: caFile,
        conversionPort: 0,
        certCheckIntervalMs: 50,
      });
      const port = webhook.conversionPort ?? 0;
      expect(port).to.be.above(0).and.not.equal(webhook.port);
      // An empty review reaches the conversion endpoint and is refused there (400), not by TLS.
      expect(await answer(port, 'POST', '/convert?timeout=30s')).to.have.property('status', 400);
      for (const [method, path] of [
        ['POST', '/mutate'],
        ['POST', '/validate'],
        ['GET', '/readyz'],
        ['GET', '/healthz'],
        ['GET', '/convert'],
      ] as Array<[string, string]>) {
        expect(await answer(port, method, path)).to.deep.equal({
          status: 404,
          message: `no route for ${method} ${path}: use POST /convert`,
        });
      }
      // The webhook port still asks for a certificate, on /convert too.
      expect(await answer(webhook.port, 'POST', '/convert')).to.be.a('string');
      expect(await call(webhook.port, leaf(first, 'clientAuth'))).to.equal(400);
      const probes = new Probes({ ready: webhook.readiness });
      expect(probes.answer('/readyz?verbose')?.body).to.include('[+]conversion-port ok');

      const { X509Certificate } = await import('node:crypto');
      const next = leaf(servingCa, 'serverAuth');
      const wanted = new X509Certificate(next.certPem).fingerprint256;
      expect(await servedFingerprint(port)).not.to.equal(wanted);
      await writeFile(join(certDir, 'tls.key'), next.keyPem);
      await writeFile(join(certDir, 'tls.crt'), next.certPem);
      const both = async () => [
        await servedFingerprint(port),
        await servedFingerprint(webhook?.port ?? 0, leaf(first, 'clientAuth')),
      ];
      const deadline = Date.now() + 5_000;
      while ((await both()).some((fingerprint) => fingerprint !== wanted) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await both()).to.deep.equal([wanted, wanted]);
    });

    it('conversionPort without clientCaFile: refused (the webhook port serves /convert to anyone then)', async () => {
      const error = await failure(startLoopbackWebhook(certDir, { conversionPort: 0 }));
      expect(error?.message).to.include('conversionPort is for a webhook with clientCaFile');
    });

    it('without the flag: no certificate is asked for, and no client-ca check', async () => {
      webhook = await startLoopbackWebhook(certDir);
      expect(await call(webhook.port)).to.equal(400);
      expect(webhook.readiness.map((check) => check.name)).not.to.include.members(['client-ca']);
      expect(webhook.readiness.map((check) => check.name)).not.to.include('conversion-port');
      expect(webhook.conversionPort).to.equal(undefined);
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
