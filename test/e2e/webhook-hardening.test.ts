/**
 * The shipped webhook process (node dist/bin/staticsite.js webhook) against hostile clients: TLS suites,
 * slow clients, bodies over the limit, `Expect: 100-continue`, the connection cap, and certificate
 * files that disappear. Values come from webhook/server-settings.ts (the one place they are set),
 * Mozilla's "intermediate" TLS profile and RFC 9110 (100-continue, 413).
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, rm, unlink } from 'node:fs/promises';
import { connect as netConnect, type Socket } from 'node:net';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import { expect } from 'chai';
import { reviewOnNewConnection } from '../../devenv/new-connection-review.ts';
import { type LoopbackCerts, loopbackCerts } from '../../devenv/webhook-certs.ts';
import { WebhookProcess } from '../../devenv/webhook-process.ts';
import { CONNECTION_SETTINGS } from '../../webhook/server-settings.ts';

/** A create the standalone webhook allows. */
const REVIEW = readFileSync(new URL('../fixtures/admission/create-v1.json', import.meta.url), 'utf8');

function tls(port: number, ca: string, options: Record<string, unknown> = {}): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, ca, servername: 'localhost', ...options }, () =>
      resolve(socket),
    );
    socket.once('error', reject);
  });
}

/** Whether a TLS connection with these options fails its handshake. */
async function refused(port: number, ca: string, options: Record<string, unknown>): Promise<boolean> {
  try {
    (await tls(port, ca, options)).destroy();
    return false;
  } catch {
    return true;
  }
}

/** Resolves with the milliseconds until the server closes the socket. */
function closedAfter(socket: Socket): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    socket.on('error', () => {});
    socket.on('data', () => {});
    socket.once('close', () => resolve(performance.now() - started));
  });
}

/** Everything the server sent until it closed the connection. */
function received(socket: Socket): Promise<string> {
  let text = '';
  return new Promise((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    socket.once('close', () => resolve(text));
  });
}

/** One chunk of a chunked body (RFC 9112, section 7.1): `size` spaces. */
function spacesChunk(size: number): Buffer {
  return Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), Buffer.alloc(size, 0x20), Buffer.from('\r\n')]);
}

describe('e2e: the shipped webhook against hostile clients', function () {
  this.timeout(90_000);
  let certs: LoopbackCerts;
  let webhook: WebhookProcess;

  before(async () => {
    certs = await loopbackCerts();
    webhook = await WebhookProcess.start({ certDir: certs.dir });
  });

  after(async () => {
    await webhook?.stop();
    await rm(certs.dir, { recursive: true, force: true });
  });

  describe('TLS', () => {
    it('refuses TLS 1.2 suites without forward secrecy or AEAD, and TLS 1.1', async () => {
      for (const ciphers of ['AES128-SHA', 'AES256-SHA', 'AES128-GCM-SHA256', 'ECDHE-RSA-AES128-SHA']) {
        expect(await refused(webhook.port, certs.ca.certPem, { maxVersion: 'TLSv1.2', ciphers }), ciphers).to.equal(
          true,
        );
      }
      const old = { maxVersion: 'TLSv1.1', minVersion: 'TLSv1', ciphers: 'DEFAULT@SECLEVEL=0' };
      expect(await refused(webhook.port, certs.ca.certPem, old)).to.equal(true);
    });

    it('accepts ECDHE with AEAD on TLS 1.2, and TLS 1.3', async () => {
      // The suites of the serving key's type: loopback certificates have ECDSA keys, as the bootstrapper's.
      const keyType = new X509Certificate(await readFile(`${certs.dir}/tls.crt`)).publicKey.asymmetricKeyType;
      const auth = keyType === 'ec' ? 'ECDSA' : 'RSA';
      for (const ciphers of [
        `ECDHE-${auth}-AES128-GCM-SHA256`,
        `ECDHE-${auth}-AES256-GCM-SHA384`,
        `ECDHE-${auth}-CHACHA20-POLY1305`,
      ]) {
        const socket = await tls(webhook.port, certs.ca.certPem, { maxVersion: 'TLSv1.2', ciphers });
        expect(socket.getCipher().standardName).to.include('ECDHE');
        socket.destroy();
      }
      const modern = await tls(webhook.port, certs.ca.certPem, { minVersion: 'TLSv1.3' });
      expect(modern.getProtocol()).to.equal('TLSv1.3');
      modern.destroy();
    });
  });

  describe('slow clients are cut off after the request timeout', () => {
    const limit = CONNECTION_SETTINGS.requestTimeoutMs + CONNECTION_SETTINGS.timeoutCheckIntervalMs + 2_000;

    it(`a connection that never starts TLS, headers that never end, a body trickled byte by byte: all closed within ${limit} ms`, async () => {
      const raw = netConnect(webhook.port, '127.0.0.1');
      const silent = closedAfter(raw);
      const headers = await tls(webhook.port, certs.ca.certPem);
      headers.write('POST /validate HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n');
      const noHeaderEnd = closedAfter(headers);
      const trickle = await tls(webhook.port, certs.ca.certPem);
      trickle.write(
        'POST /validate HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n',
      );
      const timer = setInterval(() => trickle.writable && trickle.write('{'), 500);
      const trickled = closedAfter(trickle);
      const times = await Promise.all([silent, noHeaderEnd, trickled]);
      clearInterval(timer);
      for (const ms of times) expect(ms).to.be.below(limit);
    });
  });

  /** Offers a 100 MiB chunked body in 1 MiB chunks; returns what the server answered and the bytes sent. */
  async function sendChunkedBody(options: { stopAtAnswer: boolean }): Promise<{ text: string; sent: number }> {
    const socket = await tls(webhook.port, certs.ca.certPem);
    const answer = received(socket);
    socket.write(
      'POST /validate HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
    );
    const size = 1 << 20;
    const chunk = spacesChunk(size);
    let sent = 0;
    let answered = false;
    if (options.stopAtAnswer) socket.once('data', () => (answered = true));
    const wakeOn = options.stopAtAnswer ? ['drain', 'close', 'data'] : ['drain', 'close'];
    for (let i = 0; i < 100 && !socket.destroyed && !answered; i++) {
      sent += size;
      if (!socket.write(chunk)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            for (const event of wakeOn) socket.off(event, done);
            resolve();
          };
          for (const event of wakeOn) socket.on(event, done);
        });
      }
    }
    return { text: await answer, sent };
  }

  describe('bodies over the limit', () => {
    it('a chunked body over the limit gets 413 and the connection closes at the limit, not at the end', async () => {
      // A client stops sending the body once a response arrives (RFC 9112, section 9.5).
      const { text, sent } = await sendChunkedBody({ stopAtAnswer: true });
      expect(text).to.match(/^HTTP\/1\.1 413 /);
      expect(text.toLowerCase()).to.include('connection: close');
      expect(text).to.include(`request entity is too large; limit is ${CONNECTION_SETTINGS.maxBodyBytes} bytes`);
      expect(sent).to.be.below(40 * (1 << 20));
    });

    it('a client that keeps writing past the limit without looking still reads the 413', async () => {
      // This one never stops for the answer: the server must not reset the connection while the
      // answer may still sit unread in this client's buffers.
      const { text } = await sendChunkedBody({ stopAtAnswer: false });
      expect(text).to.match(/^HTTP\/1\.1 413 /);
      expect(text).to.include(`request entity is too large; limit is ${CONNECTION_SETTINGS.maxBodyBytes} bytes`);
    });

    it('Expect: 100-continue with a length over the limit gets 413, never 100 Continue', async () => {
      const socket = await tls(webhook.port, certs.ca.certPem);
      const answer = received(socket);
      socket.write(
        'POST /validate HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 99999999\r\nexpect: 100-continue\r\n\r\n',
      );
      const text = await answer;
      expect(text).to.match(/^HTTP\/1\.1 413 /);
      expect(text).to.not.include('100 Continue');
    });

    it('Expect: 100-continue within the limit gets 100 Continue, then the answer', async () => {
      const socket = await tls(webhook.port, certs.ca.certPem);
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.startsWith('HTTP/1.1 100 Continue') && !text.includes('\r\n\r\nHTTP')) socket.write('{}');
      });
      socket.write(
        'POST /validate HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 2\r\nexpect: 100-continue\r\nconnection: close\r\n\r\n',
      );
      await new Promise((resolve) => socket.once('close', resolve));
      expect(text).to.match(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 400 /);
    });
  });

  it(`refuses connections beyond ${CONNECTION_SETTINGS.maxConnections}`, async () => {
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < CONNECTION_SETTINGS.maxConnections; i++) {
        const s = netConnect(webhook.port, '127.0.0.1');
        s.on('error', () => {});
        sockets.push(s);
      }
      await Promise.all(sockets.map((s) => new Promise((resolve) => s.once('connect', resolve))));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const extra = netConnect(webhook.port, '127.0.0.1');
      sockets.push(extra);
      const closed = await Promise.race([
        closedAfter(extra),
        new Promise<number>((resolve) => setTimeout(() => resolve(-1), 3_000)),
      ]);
      expect(closed).to.be.at.least(0);
      expect(sockets.slice(0, 10).every((s) => !s.destroyed)).to.equal(true);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  /** One review on a TLS connection that then stays open (keep-alive); resolves with the status line. */
  async function oneReview(localAddress: string): Promise<{ socket: TLSSocket; status: string }> {
    const socket = await tls(webhook.port, certs.ca.certPem, { localAddress });
    socket.on('error', () => {});
    const status = new Promise<string>((resolve) => {
      socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1').split('\r\n')[0] ?? ''));
      socket.once('close', () => resolve('closed'));
    });
    socket.write(
      `POST /validate HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(REVIEW)}\r\n\r\n${REVIEW}`,
    );
    return { socket, status: await status };
  }

  it(`${CONNECTION_SETTINGS.maxConnections} connections left idle after one review each lock no new client out`, async () => {
    const held: Socket[] = [];
    try {
      // Two addresses, each under its share: together they would fill the cap.
      for (let i = 0; i < CONNECTION_SETTINGS.maxConnections; i++) {
        const { socket } = await oneReview(i % 2 === 0 ? '127.0.0.3' : '127.0.0.4').catch(() => ({
          socket: undefined,
        }));
        if (socket) held.push(socket);
      }
      const started = performance.now();
      const fresh = await oneReview('127.0.0.2');
      held.push(fresh.socket);
      expect(fresh.status).to.equal('HTTP/1.1 200 OK');
      expect(performance.now() - started).to.be.below(3_000);
      const open = held.filter((s) => !s.destroyed).length;
      expect(open, 'idle connections reclaimed').to.be.below(CONNECTION_SETTINGS.reclaimIdleAt + 1);
    } finally {
      for (const s of held) s.destroy();
    }
  });

  it(`one address holds at most ${CONNECTION_SETTINGS.maxConnectionsPerClient} connections; another is still served`, async () => {
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < CONNECTION_SETTINGS.maxConnectionsPerClient + 20; i++) {
        const s = netConnect({ port: webhook.port, host: '127.0.0.1', localAddress: '127.0.0.5' });
        s.on('error', () => {});
        sockets.push(s);
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(sockets.filter((s) => s.destroyed).length).to.be.at.least(20);
      expect(sockets.slice(0, CONNECTION_SETTINGS.maxConnectionsPerClient).every((s) => !s.destroyed)).to.equal(true);
      const other = await oneReview('127.0.0.6');
      sockets.push(other.socket);
      expect(other.status).to.equal('HTTP/1.1 200 OK');
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  /** The API server's review on a new connection from its own address, with its 5 s webhook timeout. */
  async function apiServerReview(): Promise<number | string> {
    const caPem = certs.ca.certPem;
    const options = { port: webhook.port, caPem, body: REVIEW, localAddress: '127.0.0.2', timeoutMs: 5_000 };
    const answer = await reviewOnNewConnection(options);
    return typeof answer === 'object' ? answer.status : answer;
  }

  /** staticsite_webhook_connections_reclaimed_total by reason, from the webhook's /metrics. */
  async function reclaimedConnections(): Promise<Record<string, number>> {
    const text = await (await fetch(webhook.metricsUrl('/metrics'))).text();
    const pattern = /^staticsite_webhook_connections_reclaimed_total\{reason="([^"]+)"\} (\S+)$/gm;
    return Object.fromEntries([...text.matchAll(pattern)].map(([, reason, value]) => [reason, Number(value)]));
  }

  it(`${10 * CONNECTION_SETTINGS.maxConnections} half-open and slow-header connections from 16 addresses: every review of the API server is answered`, async () => {
    const attackers: Socket[] = [];
    let opened = 0;
    const address = () => `127.0.1.${1 + (opened++ % 16)}`;
    const halfOpen = async (count: number) => {
      const batch = Array.from({ length: count }, () => {
        const socket = netConnect({ port: webhook.port, host: '127.0.0.1', localAddress: address() });
        socket.on('error', () => {});
        return socket;
      });
      attackers.push(...batch);
      await Promise.all(batch.map((s) => new Promise((resolve) => s.once('connect', resolve).once('close', resolve))));
    };
    const slowHeaders = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const socket = await tls(webhook.port, certs.ca.certPem, { localAddress: address() }).catch(() => undefined);
        socket?.on('error', () => {});
        socket?.write('POST /validate HTTP/1.1\r\nhost: localhost\r\n');
        if (socket) attackers.push(socket);
      }
    };
    const before = await reclaimedConnections();
    try {
      while (opened < 10 * CONNECTION_SETTINGS.maxConnections) {
        await halfOpen(64);
        await slowHeaders(2);
      }
      // The attackers keep it up: each 100 ms they open 128 more half-open and 2 slow-header ones.
      const reviews = [];
      for (let i = 0; i < 40; i++) {
        reviews.push(apiServerReview());
        await Promise.all([halfOpen(128), slowHeaders(2), new Promise((resolve) => setTimeout(resolve, 100))]);
      }
      const answers = await Promise.all(reviews);
      expect(answers.filter((answer) => answer !== 200)).to.deep.equal([]);
      const after = await reclaimedConnections();
      expect((after.handshake ?? 0) - (before.handshake ?? 0)).to.be.above(8 * CONNECTION_SETTINGS.maxConnections);
      expect((after.headers ?? 0) - (before.headers ?? 0)).to.be.above(0);
    } finally {
      for (const s of attackers) s.destroy();
    }
  });

  it('certificate files deleted from the cert dir: /readyz fails and says why', async () => {
    const readyz = () =>
      fetch(`http://127.0.0.1:${webhook.metricsPort}/readyz?verbose`).then(async (r) => [r.status, await r.text()]);
    expect((await readyz())[0]).to.equal(200);
    await unlink(`${certs.dir}/tls.key`);
    const deadline = Date.now() + 20_000;
    let last: unknown[] = [];
    while (Date.now() < deadline) {
      last = await readyz();
      if (last[0] !== 200) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(last[0]).to.equal(500);
    expect(last[1]).to.include('[-]serving-certificate failed: reason withheld');
    expect(last[1]).to.match(/warn: cert dir not usable: .*tls\.key/);
    await certs.rotate();
    await webhook.stop();
    webhook = await WebhookProcess.start({ certDir: certs.dir });
  });
});
