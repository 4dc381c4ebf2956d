import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { expect } from 'chai';
import { pino } from 'pino';
import type { RunningWebhook } from '../../webhook/server.ts';
import { startLoopbackWebhook } from '../support/loopback-servers.ts';
import { type LoopbackCerts, loopbackCerts } from '../support/webhook-certs.ts';

function post(port: number, ca: string, path: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', ca, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function negotiated(port: number, ca: string, options: { ALPNProtocols?: string[]; maxVersion?: 'TLSv1.1' }) {
  return new Promise<{ alpn: string | false; protocol: string | null }>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost', ...options }, () => {
      resolve({ alpn: socket.alpnProtocol ?? false, protocol: socket.getProtocol() });
      socket.end();
    });
    socket.on('error', reject);
  });
}

describe('webhook: the HTTPS server', function () {
  this.timeout(20_000);
  let certs: LoopbackCerts;
  let webhook: RunningWebhook;

  before(async () => {
    certs = await loopbackCerts();
    webhook = await startLoopbackWebhook(certs.dir, { logger: pino({ level: 'silent' }) });
  });
  after(async () => {
    await webhook.close();
    await rm(certs.dir, { recursive: true, force: true });
  });

  it('serves reviews over HTTPS with the cert from --cert-dir', async () => {
    const review = readFileSync(new URL('../fixtures/admission/create-v1.json', import.meta.url), 'utf8');
    const res = await post(webhook.port, certs.ca.certPem, '/mutate', review);
    expect(res.status).to.equal(200);
    expect(JSON.parse(res.body).response.allowed).to.equal(true);
  });

  it('standalone: ready, and /readyz says the cross-object rule is off', async () => {
    const res = await fetch(`http://127.0.0.1:${webhook.metricsPort}/readyz`);
    expect(res.status).to.equal(200);
    expect(await res.text()).to.equal('ok\nstandalone: no cluster access, the unique-hostname rule is off');
  });

  it('speaks HTTP/1.1 only and refuses TLS below 1.2', async () => {
    const h2 = await negotiated(webhook.port, certs.ca.certPem, { ALPNProtocols: ['h2', 'http/1.1'] });
    expect(h2.alpn).to.not.equal('h2');
    const error = await negotiated(webhook.port, certs.ca.certPem, { maxVersion: 'TLSv1.1' }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error).to.be.instanceOf(Error);
  });

  it('exposes request metrics and the certificate expiry', async () => {
    const text = await (await fetch(`http://127.0.0.1:${webhook.metricsPort}/metrics`)).text();
    expect(text).to.match(
      /staticsite_webhook_requests_total\{path="\/mutate",operation="CREATE",outcome="patched"\} 1/,
    );
    expect(text).to.match(/staticsite_webhook_certificate_expiry_timestamp_seconds \d/);
  });

  it('close() stops accepting connections', async () => {
    const port = webhook.port;
    await webhook.close();
    const error = await negotiated(port, certs.ca.certPem, {}).then(
      () => undefined,
      (e: NodeJS.ErrnoException) => e,
    );
    expect(error?.code).to.equal('ECONNREFUSED');
  });
});

describe('webhook: an ECDSA serving key', function () {
  this.timeout(20_000);

  it('serves with an ECDSA P-256 certificate as with an RSA one (a cheaper signature per handshake)', async () => {
    const fixture = (name: string) => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url), 'utf8');
    const dir = await mkdtemp(join(tmpdir(), 'staticsite-ecdsa-'));
    await writeFile(join(dir, 'tls.crt'), fixture('ecdsa-p256.crt'));
    await writeFile(join(dir, 'tls.key'), fixture('ecdsa-p256.key'));
    const webhook = await startLoopbackWebhook(dir, { logger: pino({ level: 'silent' }) });
    try {
      const ca = fixture('ecdsa-p256.crt');
      const curve = await new Promise<string | undefined>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port: webhook.port, ca, servername: 'localhost' }, () => {
          resolve(socket.getPeerCertificate().asn1Curve);
          socket.end();
        });
        socket.on('error', reject);
      });
      expect(curve).to.equal('prime256v1');
      const review = readFileSync(new URL('../fixtures/admission/create-v1.json', import.meta.url), 'utf8');
      const res = await post(webhook.port, ca, '/mutate', review);
      expect(res.status).to.equal(200);
      expect(JSON.parse(res.body).response.allowed).to.equal(true);
    } finally {
      await webhook.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
