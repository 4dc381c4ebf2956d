/**
 * Failed TLS handshakes by reason (webhook/tls/handshake-failures.ts) from real handshakes on
 * loopback, and the shipped server's wiring: with `--client-ca` and `--conversion-port`, both ports
 * keep admitting callers while half-open connections from 16 addresses flood the cap, and the
 * webhook's metrics count what was reclaimed and why handshakes failed.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request } from 'node:https';
import { type AddressInfo, type Socket, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { expect } from 'chai';
import { createCertificateAuthority, issueCertificate, type KeyPair } from '../../certs/x509.ts';
import type { RunningWebhook } from '../../webhook/server.ts';
import { CONNECTION_SETTINGS } from '../../webhook/server-settings.ts';
import { countHandshakeFailures, type HandshakeFailureReason } from '../../webhook/tls/handshake-failures.ts';
import { startLoopbackWebhook } from '../support/loopback-servers.ts';

const notBefore = new Date(Date.now() - 60_000);
const authority = (commonName: string) => createCertificateAuthority({ commonName, notBefore, validityDays: 2 });
const servingCa = authority('serving-ca');
const clientCa = authority('client-ca');
const leaf = (ca: KeyPair, usage: 'serverAuth' | 'clientAuth') =>
  issueCertificate({
    ca,
    commonName: usage === 'serverAuth' ? 'w' : 'caller',
    subjectAltNames: usage === 'serverAuth' ? ['127.0.0.1'] : [],
    usage,
    notBefore,
    validityDays: 1,
  });
const serving = leaf(servingCa, 'serverAuth');
const apiServer = leaf(clientCa, 'clientAuth');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens a TLS client with `options` and waits until it is closed or 300 ms pass. */
async function attempt(port: number, options: Record<string, unknown>): Promise<void> {
  const socket = tlsConnect({ host: '127.0.0.1', port, ca: servingCa.certPem, ...options });
  socket.on('error', () => {});
  await Promise.race([new Promise((resolve) => socket.once('close', resolve)), sleep(300)]);
  socket.destroy();
}

describe('TLS handshake failures, by reason', () => {
  const failures: HandshakeFailureReason[] = [];
  const server = createServer({
    cert: serving.certPem,
    key: serving.keyPem,
    ca: clientCa.certPem,
    requestCert: true,
    rejectUnauthorized: true,
    handshakeTimeout: 200,
  });
  countHandshakeFailures(server, (reason) => failures.push(reason));
  let port = 0;

  before(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  beforeEach(() => failures.splice(0));
  after(() => new Promise((resolve) => server.close(resolve)));

  for (const version of ['TLSv1.2', 'TLSv1.3']) {
    it(`${version}: no certificate, one from another CA; one from the CA is no failure`, async () => {
      await attempt(port, { maxVersion: version });
      const stranger = leaf(authority('stranger'), 'clientAuth');
      await attempt(port, { maxVersion: version, cert: stranger.certPem, key: stranger.keyPem });
      await attempt(port, { maxVersion: version, cert: apiServer.certPem, key: apiServer.keyPem });
      await sleep(50);
      expect(failures).to.deep.equal(['no-client-certificate', 'bad-certificate']);
    });
  }

  it('plain HTTP and TLS 1.1 are protocol failures; a silent client times out; one that hangs up closed', async () => {
    const http = tcpConnect(port, '127.0.0.1', () => http.write('GET / HTTP/1.1\r\n\r\n'));
    http.on('error', () => {});
    await new Promise((resolve) => http.once('close', resolve));
    await attempt(port, { maxVersion: 'TLSv1.1', minVersion: 'TLSv1', ciphers: 'DEFAULT@SECLEVEL=0' });
    const silent = tcpConnect(port, '127.0.0.1');
    await once(silent, 'close');
    const leaving = tcpConnect(port, '127.0.0.1');
    await once(leaving, 'connect');
    leaving.destroy();
    await sleep(100);
    expect(failures).to.deep.equal(['protocol', 'protocol', 'timeout', 'closed']);
  });
});

/** A POST on a new connection from 127.0.0.2: the HTTP status, or the error's code. */
function call(port: number, path: string, client?: KeyPair): Promise<number | string> {
  return new Promise((resolve) => {
    const options = {
      host: '127.0.0.1',
      port,
      path,
      method: 'POST',
      localAddress: '127.0.0.2',
      ca: servingCa.certPem,
      agent: false,
      timeout: 5_000,
      headers: { 'content-type': 'application/json' },
      ...(client ? { cert: client.certPem, key: client.keyPem } : {}),
    };
    const req = request(options, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    req.end('{}');
  });
}

/** `count` TCP connections to `port` from 127.0.1.1-16 that never start TLS, once all connected. */
async function halfOpenFlood(port: number, count: number): Promise<Socket[]> {
  const sockets = [];
  for (let i = 0; i < count; i++) {
    const socket = tcpConnect({ host: '127.0.0.1', port, localAddress: `127.0.1.${1 + (i % 16)}` });
    socket.on('error', () => {});
    sockets.push(socket);
  }
  await Promise.all(sockets.map((s) => Promise.race([once(s, 'connect'), once(s, 'close')]).catch(() => {})));
  return sockets;
}

describe('the shipped server with --client-ca and --conversion-port under a flood of half-open connections', function () {
  this.timeout(30_000);
  let dir: string;
  let webhook: RunningWebhook;
  const flood: Socket[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'staticsite-fairness-'));
    await writeFile(join(dir, 'tls.crt'), serving.certPem);
    await writeFile(join(dir, 'tls.key'), serving.keyPem);
    await writeFile(join(dir, 'client-ca.crt'), clientCa.certPem);
    webhook = await startLoopbackWebhook(dir, { clientCaFile: join(dir, 'client-ca.crt'), conversionPort: 0 });
  });

  after(async () => {
    for (const s of flood) s.destroy();
    await webhook.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('both ports still admit their callers, and the metrics say what was reclaimed and why handshakes failed', async () => {
    const conversionPort = webhook.conversionPort ?? 0;
    for (const port of [webhook.port, conversionPort]) {
      flood.push(...(await halfOpenFlood(port, 2 * CONNECTION_SETTINGS.maxConnections)));
    }
    // An empty body is refused by the review endpoint (400): the call got through TLS and HTTP.
    expect(await call(webhook.port, '/validate', apiServer)).to.equal(400);
    expect(await call(conversionPort, '/convert')).to.equal(400);
    expect(await call(webhook.port, '/validate')).to.be.a('string');
    const metrics = await webhook.metrics.registry.getSingleMetricAsString(
      'staticsite_webhook_connections_reclaimed_total',
    );
    const reclaimed = Number(/reason="handshake"} (\d+)/.exec(metrics)?.[1]);
    expect(reclaimed).to.be.above(CONNECTION_SETTINGS.maxConnections);
    const failures = await webhook.metrics.registry.getSingleMetricAsString(
      'staticsite_webhook_tls_handshake_failures_total',
    );
    expect(failures).to.match(/reason="no-client-certificate"} 1$/m);
  });
});
