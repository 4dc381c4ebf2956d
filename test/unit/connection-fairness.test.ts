/**
 * webhook/http/connection-fairness.ts on a real HTTPS server on loopback, with small limits: which
 * connections a newcomer near the cap closes (idle, then pending oldest first, never one being
 * answered), the shorter deadline under pressure, the per-address limit, and a client that still
 * gets in while half-open connections from many addresses flood the cap.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type Socket, connect as tcpConnect } from 'node:net';
import { type ConnectionOptions, type TLSSocket, connect as tlsConnect } from 'node:tls';
import { expect } from 'chai';
import { createCertificateAuthority, issueCertificate } from '../../certs/x509.ts';
import { keepConnectionsFair, type ReclaimReason } from '../../webhook/http/connection-fairness.ts';

const notBefore = new Date(Date.now() - 60_000);
const ca = createCertificateAuthority({ commonName: 'fairness-test-ca', notBefore, validityDays: 2 });
const serving = issueCertificate({
  ca,
  commonName: 'w',
  subjectAltNames: ['127.0.0.1'],
  usage: 'serverAuth',
  notBefore,
  validityDays: 1,
});
const SETTINGS = { reclaimIdleAt: 8, maxConnectionsPerClient: 6, pendingDeadlineUnderPressureMs: 300 };
const MAX_CONNECTIONS = 10;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Harness {
  server: Server;
  port: number;
  reclaimed: ReclaimReason[];
  /** Answers that wait for release() before they are sent. */
  held: ServerResponse[];
  holdAnswers: boolean;
}

async function harness(): Promise<Harness> {
  const h = { reclaimed: [], held: [], holdAnswers: false } as unknown as Harness;
  h.server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    req.resume();
    if (h.holdAnswers) h.held.push(res);
    else res.end('ok');
  });
  h.server.maxConnections = MAX_CONNECTIONS;
  keepConnectionsFair(h.server, SETTINGS, (reason) => h.reclaimed.push(reason));
  h.server.listen(0, '127.0.0.1');
  await once(h.server, 'listening');
  h.port = (h.server.address() as AddressInfo).port;
  return h;
}

/** A TCP connection the server has accepted, that never starts TLS. */
async function halfOpen(h: Harness, localAddress: string): Promise<Socket> {
  const accepted = once(h.server, 'connection');
  const socket = tcpConnect({ host: '127.0.0.1', port: h.port, localAddress });
  socket.on('error', () => {});
  await accepted;
  return socket;
}

/** A TLS connection the server has secured, that has sent nothing yet. */
async function secured(h: Harness, localAddress: string): Promise<TLSSocket> {
  const done = once(h.server, 'secureConnection');
  const socket = tlsConnect({ host: '127.0.0.1', port: h.port, localAddress, ca: ca.certPem } as ConnectionOptions);
  socket.on('error', () => {});
  await done;
  return socket;
}

/** A TLS connection that sent the start of a request's headers, never their end. */
async function slowHeaders(h: Harness, localAddress: string): Promise<TLSSocket> {
  const socket = await secured(h, localAddress);
  socket.write('POST /validate HTTP/1.1\r\nhost: 127.0.0.1\r\n');
  await sleep(20);
  return socket;
}

/** Sends one request on `socket` (keep-alive); resolves with the status line, or 'closed'. */
function request(socket: TLSSocket): Promise<string> {
  const status = new Promise<string>((resolve) => {
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1').split('\r\n')[0] ?? ''));
    socket.once('close', () => resolve('closed'));
  });
  socket.write('POST /validate HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 2\r\n\r\n{}');
  return status;
}

/** A TLS connection left idle after one answered request. */
async function idle(h: Harness, localAddress: string): Promise<TLSSocket> {
  const socket = await secured(h, localAddress);
  expect(await request(socket)).to.equal('HTTP/1.1 200 OK');
  return socket;
}

/** Four addresses in turn: a test's connections stay under the per-address limit. */
const spread = (i: number) => `127.0.2.${1 + (i % 4)}`;
const open = (sockets: Socket[]) => sockets.map((s) => !s.destroyed && !s.closed);
const settle = () => sleep(100);

describe('connection fairness: near the cap a newcomer makes room, never at the cost of a request being answered', () => {
  let h: Harness;
  const sockets: Socket[] = [];
  const track = <S extends Socket>(socket: S) => {
    sockets.push(socket);
    return socket;
  };

  beforeEach(async () => {
    h = await harness();
  });

  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    h.server.closeAllConnections();
    await new Promise((resolve) => h.server.close(resolve));
  });

  it('below reclaimIdleAt nothing is closed, however old', async () => {
    for (let i = 0; i < SETTINGS.reclaimIdleAt - 2; i++) track(await halfOpen(h, spread(i)));
    await sleep(SETTINGS.pendingDeadlineUnderPressureMs + 50);
    track(await halfOpen(h, '127.0.0.2'));
    await settle();
    expect(open(sockets).every(Boolean)).to.equal(true);
    expect(h.reclaimed).to.deep.equal([]);
  });

  it('half-open connections: the oldest is closed until fewer than reclaimIdleAt are open', async () => {
    const waiting = [];
    for (let i = 0; i < SETTINGS.reclaimIdleAt - 1; i++) waiting.push(track(await halfOpen(h, spread(i))));
    const newcomer = track(await secured(h, '127.0.0.2'));
    expect(await request(newcomer)).to.equal('HTTP/1.1 200 OK');
    await settle();
    expect(open(waiting)).to.deep.equal([false, true, true, true, true, true, true]);
    expect(h.reclaimed).to.deep.equal(['handshake']);
  });

  it('connections whose request headers never end are pending too', async () => {
    const waiting = [];
    for (let i = 0; i < SETTINGS.reclaimIdleAt - 1; i++) waiting.push(track(await slowHeaders(h, spread(i))));
    track(await halfOpen(h, '127.0.0.2'));
    track(await halfOpen(h, '127.0.0.2'));
    await settle();
    // The second newcomer closes the oldest pending one again; the first newcomer is younger.
    expect(open(waiting)).to.deep.equal([false, false, true, true, true, true, true]);
    expect(h.reclaimed).to.deep.equal(['headers', 'headers']);
  });

  it('idle keep-alive connections go first, all of them; pending ones then only as far as needed', async () => {
    const idles = [];
    const waiting = [];
    for (let i = 0; i < 3; i++) idles.push(track(await idle(h, spread(i))));
    for (let i = 0; i < 4; i++) waiting.push(track(await halfOpen(h, spread(i))));
    track(await halfOpen(h, '127.0.0.2'));
    await settle();
    expect(open(idles)).to.deep.equal([false, false, false]);
    expect(open(waiting)).to.deep.equal([true, true, true, true]);
    expect(h.reclaimed).to.deep.equal(['idle', 'idle', 'idle']);
  });

  it('under pressure, every pending connection older than the shorter deadline is closed', async () => {
    const old = [];
    for (let i = 0; i < SETTINGS.reclaimIdleAt - 3; i++) old.push(track(await halfOpen(h, spread(i))));
    await sleep(SETTINGS.pendingDeadlineUnderPressureMs + 50);
    const young = [track(await slowHeaders(h, spread(1))), track(await halfOpen(h, spread(2)))];
    track(await halfOpen(h, '127.0.0.2'));
    await settle();
    expect(open(old).every((o) => !o)).to.equal(true);
    expect(open(young)).to.deep.equal([true, true]);
    expect(h.reclaimed).to.deep.equal(Array(old.length).fill('handshake'));
  });

  it('never closes a connection whose request is being answered, nor the newcomer', async () => {
    h.holdAnswers = true;
    const busy = [];
    const answers = [];
    for (let i = 0; i < SETTINGS.reclaimIdleAt; i++) {
      const socket = track(await secured(h, spread(i)));
      answers.push(request(socket));
      busy.push(socket);
      while (h.held.length <= i) await sleep(5);
    }
    const newcomers = [track(await halfOpen(h, '127.0.0.2'))];
    await settle();
    expect(open(newcomers)).to.deep.equal([true]);
    newcomers.push(track(await halfOpen(h, '127.0.0.2')));
    await settle();
    // The second newcomer closed the first (pending, the oldest such); the answers are still owed.
    expect(open(newcomers)).to.deep.equal([false, true]);
    expect(open(busy).every(Boolean)).to.equal(true);
    for (const res of h.held) res.end('ok');
    expect(await Promise.all(answers)).to.deep.equal(Array(busy.length).fill('HTTP/1.1 200 OK'));
    expect(h.reclaimed).to.deep.equal(['handshake']);
  });

  it(`one address holds at most ${SETTINGS.maxConnectionsPerClient}; its next is closed at once`, async () => {
    const mine = [];
    for (let i = 0; i < SETTINGS.maxConnectionsPerClient + 1; i++) mine.push(track(await halfOpen(h, '127.0.0.3')));
    await settle();
    expect(open(mine)).to.deep.equal([...Array(SETTINGS.maxConnectionsPerClient).fill(true), false]);
    expect(h.reclaimed).to.deep.equal(['per-client']);
  });

  it('10x the cap of half-open connections from 16 addresses: a new client still gets its answer', async () => {
    const flood = [];
    for (let i = 0; i < 10 * MAX_CONNECTIONS; i++) {
      const socket = tcpConnect({ host: '127.0.0.1', port: h.port, localAddress: `127.0.1.${1 + (i % 16)}` });
      socket.on('error', () => {});
      flood.push(track(socket));
    }
    await Promise.all(flood.map((s) => once(s, 'connect').catch(() => {})));
    await settle();
    for (let i = 0; i < 5; i++) {
      const client = track(await secured(h, '127.0.0.2'));
      expect(await request(client)).to.equal('HTTP/1.1 200 OK');
    }
    expect(h.reclaimed.filter((r) => r === 'handshake').length).to.be.above(5 * MAX_CONNECTIONS);
  });
});
