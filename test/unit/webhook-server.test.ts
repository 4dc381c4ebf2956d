import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { expect } from 'chai';
import { pino } from 'pino';
import { freePort } from '../../devenv/ports.ts';
import { type LoopbackCerts, loopbackCerts } from '../../devenv/webhook-certs.ts';
import { MemoryHostnameIndex } from '../../webhook/admission/hostname-index.ts';
import type { RunningWebhook } from '../../webhook/server.ts';
import { startLoopbackWebhook } from '../support/loopback-servers.ts';

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

function postWithHeaders(port: number, ca: string, path: string, body: string) {
  return new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        ca,
        // A keep-alive client, as the API server is: the server decides whether the connection stays.
        agent: new Agent({ keepAlive: true }),
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
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

  it('standalone: ready, and /readyz?verbose says the cross-object rule is off', async () => {
    // k8s.io/apiserver healthz.go: "ok" when healthy; with ?verbose "[+]%s ok" per check and
    // "%s check passed". The note is a "warn:" line, the form healthz.go uses for its remarks.
    const res = await fetch(`http://127.0.0.1:${webhook.metricsPort}/readyz`);
    expect([res.status, await res.text()]).to.deep.equal([200, 'ok']);
    const verbose = await fetch(`http://127.0.0.1:${webhook.metricsPort}/readyz?verbose`);
    expect([verbose.status, await verbose.text()]).to.deep.equal([
      200,
      '[+]serving-certificate ok\n[+]staticsite-cache ok\n[+]review-workers ok\n[+]webhook-port ok\n[+]shutdown ok\nwarn: standalone: no cluster access, the unique-hostname rule is off\nreadyz check passed\n',
    ]);
    const live = await fetch(`http://127.0.0.1:${webhook.metricsPort}/livez`);
    expect([live.status, await live.text()]).to.deep.equal([200, 'ok']);
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

describe('webhook: readiness while the StaticSite cache has not synced', function () {
  this.timeout(20_000);

  it('/readyz is not ready until the webhook port listens, however ready the rest is', async () => {
    const certs = await loopbackCerts();
    const index = new MemoryHostnameIndex();
    index.synced = true;
    const metricsPort = await freePort();
    let release = () => {};
    // startWebhookServer starts the hostname source after the workers and before it listens.
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered = () => {};
    const inWindow = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const starting = startLoopbackWebhook(certs.dir, {
      metricsPort,
      hostnames: {
        index,
        start: async () => {
          entered();
          await held;
        },
        stop: async () => {},
      },
    });
    try {
      await inWindow;
      const before = await fetch(`http://127.0.0.1:${metricsPort}/readyz?verbose`);
      expect(before.status).to.equal(500);
      expect(await before.text()).to.include('[-]webhook-port failed: reason withheld\n');
      release();
      const webhook = await starting;
      const after = await fetch(`http://127.0.0.1:${webhook.metricsPort}/readyz`);
      expect([after.status, await after.text()]).to.deep.equal([200, 'ok']);
    } finally {
      release();
      await (await starting.catch(() => undefined))?.close();
      await rm(certs.dir, { recursive: true, force: true });
    }
  });

  it('/readyz fails, names the check, says what is missing, and logs the reason', async () => {
    const certs = await loopbackCerts();
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const index = new MemoryHostnameIndex(); // synced: false
    const webhook = await startLoopbackWebhook(certs.dir, {
      logger,
      hostnames: { index, start: async () => {}, stop: async () => {} },
    });
    try {
      // k8s.io/apiserver healthz.go: on failure always verbose, "[-]%s failed: reason withheld",
      // "%s check failed", 500.
      const res = await fetch(`http://127.0.0.1:${webhook.metricsPort}/readyz`);
      expect([res.status, await res.text()]).to.deep.equal([
        500,
        '[+]serving-certificate ok\n[-]staticsite-cache failed: reason withheld\n[+]review-workers ok\n[+]webhook-port ok\n[+]shutdown ok\nwarn: StaticSite cache not synced yet\nreadyz check failed\n',
      ]);
      expect(lines.find((l) => l.msg === 'readyz check failed')).to.deep.include({
        checks: ['[-]staticsite-cache failed: StaticSite cache not synced yet'],
        notes: ['StaticSite cache not synced yet'],
      });
      index.synced = true;
      const ready = await fetch(`http://127.0.0.1:${webhook.metricsPort}/readyz?verbose`);
      expect([ready.status, await ready.text()]).to.deep.equal([
        200,
        '[+]serving-certificate ok\n[+]staticsite-cache ok\n[+]review-workers ok\n[+]webhook-port ok\n[+]shutdown ok\nreadyz check passed\n',
      ]);
    } finally {
      await webhook.close();
      await rm(certs.dir, { recursive: true, force: true });
    }
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

describe('webhook: shutdown delay (after SIGTERM, serve while the endpoint leaves the Service)', function () {
  this.timeout(20_000);

  it('keeps answering, not ready, each answer closing its connection; then stops accepting', async () => {
    const certs = await loopbackCerts();
    const webhook = await startLoopbackWebhook(certs.dir, {
      logger: pino({ level: 'silent' }),
      shutdownDelayMs: 1_500,
    });
    const review = readFileSync(new URL('../fixtures/admission/create-v1.json', import.meta.url), 'utf8');
    try {
      const before = await postWithHeaders(webhook.port, certs.ca.certPem, '/mutate', review);
      expect(before).to.deep.equal({ status: 200, connection: 'keep-alive' });
      const closed = webhook.close();
      const during = await postWithHeaders(webhook.port, certs.ca.certPem, '/mutate', review);
      expect(during).to.deep.equal({ status: 200, connection: 'close' });
      const ready = await fetch(`http://127.0.0.1:${webhook.metricsPort}/readyz?verbose`);
      expect(ready.status).to.equal(500);
      expect(await ready.text()).to.include('[-]shutdown failed: reason withheld\n');
      await closed;
      const after = await postWithHeaders(webhook.port, certs.ca.certPem, '/mutate', review).catch(
        (error: NodeJS.ErrnoException) => error.code,
      );
      expect(after).to.equal('ECONNREFUSED');
    } finally {
      await webhook.close();
      await rm(certs.dir, { recursive: true, force: true });
    }
  });
});
