/**
 * webhook/http/connection-fairness.ts on a real HTTPS server on loopback, with small limits: which
 * connections a newcomer near the cap closes (idle, then pending oldest first, never one being
 * answered), the shorter deadline under pressure, the per-address limit, and a client that still
 * gets in while half-open connections from many addresses flood the cap. Time is a ManualClock:
 * ages move only when a test advances it. The rule runs in the server's 'connection' listener, before
 * the helpers below see that event, so its decisions are made when a helper resolves; a test then
 * checks the server's side at once and waits for the closes to reach the client.
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
import { ManualClock } from '../support/kube/manual-clock.ts';

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
  clock: ManualClock;
  reclaimed: ReclaimReason[];
  /** Answers that wait for release() before they are sent. */
  held: ServerResponse[];
  holdAnswers: boolean;
  /** Every answer, held or sent. */
  answers: ServerResponse[];
  /** A client socket's other end: the server's raw socket, or its TLS socket once secured. */
  serverSide: WeakMap<Socket, Socket>;
}

async function harness(): Promise<Harness> {
  const h = {
    clock: new ManualClock(),
    reclaimed: [],
    held: [],
    holdAnswers: false,
    answers: [],
    serverSide: new WeakMap(),
  } as unknown as Harness;
  h.server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    req.resume();
    h.answers.push(res);
    if (h.holdAnswers) h.held.push(res);
    else res.end('ok');
  });
  h.server.maxConnections = MAX_CONNECTIONS;
  keepConnectionsFair(h.server, SETTINGS, (reason) => h.reclaimed.push(reason), h.clock);
  h.server.listen(0, '127.0.0.1');
  await once(h.server, 'listening');
  h.port = (h.server.address() as AddressInfo).port;
  return h;
}

/** Polls `condition` until it holds; fails after 5 s, well inside the test's timeout. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + 5000;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(1);
  }
}

/** Resolves once `socket` has closed (an error before it, such as ECONNRESET, is expected). */
const closed = (socket: Socket) =>
  new Promise<void>((resolve) => (socket.closed ? resolve() : socket.once('close', () => resolve())));

/** A TCP connection the server has accepted, that never starts TLS. */
async function halfOpen(h: Harness, localAddress: string): Promise<Socket> {
  const accepted = once(h.server, 'connection');
  const socket = tcpConnect({ host: '127.0.0.1', port: h.port, localAddress });
  socket.on('error', () => {});
  const [serverSide] = (await accepted) as [Socket];
  h.serverSide.set(socket, serverSide);
  return socket;
}

/** A TLS connection the server has secured, that has sent nothing yet. */
async function secured(h: Harness, localAddress: string): Promise<TLSSocket> {
  const done = once(h.server, 'secureConnection');
  const socket = tlsConnect({ host: '127.0.0.1', port: h.port, localAddress, ca: ca.certPem } as ConnectionOptions);
  socket.on('error', () => {});
  const [serverSide] = (await done) as [TLSSocket];
  h.serverSide.set(socket, serverSide);
  return socket;
}

/** A TLS connection that sent the start of a request's headers, never their end. */
async function slowHeaders(h: Harness, localAddress: string): Promise<TLSSocket> {
  const socket = await secured(h, localAddress);
  const start = 'POST /validate HTTP/1.1\r\nhost: 127.0.0.1\r\n';
  socket.write(start);
  const serverSide = h.serverSide.get(socket) as TLSSocket;
  await until(() => serverSide.bytesRead >= start.length, 'the server to read the start of the headers');
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

/** A TLS connection left idle after one answered request, once the server has finished writing it. */
async function idle(h: Harness, localAddress: string): Promise<TLSSocket> {
  const socket = await secured(h, localAddress);
  expect(await request(socket)).to.equal('HTTP/1.1 200 OK');
  await until(() => h.answers.every((res) => res.writableFinished), 'the answer to be written');
  return socket;
}

/** Four addresses in turn: a test's connections stay under the per-address limit. */
const spread = (i: number) => `127.0.2.${1 + (i % 4)}`;
const open = (sockets: Socket[]) => sockets.map((s) => !s.destroyed && !s.closed);

/**
 * Which of `sockets` are open must be `expected`: on the server's side at once, then on the
 * client's once the closes expected have arrived, and a short settle after them for one not expected.
 */
async function expectOpen(h: Harness, sockets: Socket[], expected: boolean[]): Promise<void> {
  expect(sockets.map((s) => h.serverSide.get(s)?.destroyed === false)).to.deep.equal(expected);
  await Promise.all(sockets.filter((_, i) => !expected[i]).map(closed));
  await sleep(50);
  expect(open(sockets)).to.deep.equal(expected);
}

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
    await h.clock.advance(SETTINGS.pendingDeadlineUnderPressureMs + 50);
    track(await halfOpen(h, '127.0.0.2'));
    await expectOpen(h, sockets, Array(sockets.length).fill(true));
    expect(h.reclaimed).to.deep.equal([]);
  });

  it('half-open connections: the oldest is closed until fewer than reclaimIdleAt are open', async () => {
    const waiting = [];
    for (let i = 0; i < SETTINGS.reclaimIdleAt - 1; i++) waiting.push(track(await halfOpen(h, spread(i))));
    const newcomer = track(await secured(h, '127.0.0.2'));
    expect(await request(newcomer)).to.equal('HTTP/1.1 200 OK');
    await expectOpen(h, waiting, [false, true, true, true, true, true, true]);
    expect(h.reclaimed).to.deep.equal(['handshake']);
  });

  it('connections whose request headers never end are pending too', async () => {
    const waiting = [];
    for (let i = 0; i < SETTINGS.reclaimIdleAt - 1; i++) waiting.push(track(await slowHeaders(h, spread(i))));
    track(await halfOpen(h, '127.0.0.2'));
    track(await halfOpen(h, '127.0.0.2'));
    // The second newcomer closes the oldest pending one again; the first newcomer is younger.
    await expectOpen(h, waiting, [false, false, true, true, true, true, true]);
    expect(h.reclaimed).to.deep.equal(['headers', 'headers']);
  });

  it('idle keep-alive connections go first, all of them; pending ones then only as far as needed', async () => {
    const idles = [];
    const waiting = [];
    for (let i = 0; i < 3; i++) idles.push(track(await idle(h, spread(i))));
    for (let i = 0; i < 4; i++) waiting.push(track(await halfOpen(h, spread(i))));
    track(await halfOpen(h, '127.0.0.2'));
    await expectOpen(h, [...idles, ...waiting], [false, false, false, true, true, true, true]);
    expect(h.reclaimed).to.deep.equal(['idle', 'idle', 'idle']);
  });

  it('under pressure, every pending connection older than the shorter deadline is closed', async () => {
    const old = [];
    for (let i = 0; i < SETTINGS.reclaimIdleAt - 3; i++) old.push(track(await halfOpen(h, spread(i))));
    await h.clock.advance(SETTINGS.pendingDeadlineUnderPressureMs + 50);
    const young = [track(await slowHeaders(h, spread(1))), track(await halfOpen(h, spread(2)))];
    track(await halfOpen(h, '127.0.0.2'));
    await expectOpen(h, [...old, ...young], [...Array(old.length).fill(false), true, true]);
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
      await until(() => h.held.length > i, `request ${i} to arrive`);
    }
    const newcomers = [track(await halfOpen(h, '127.0.0.2'))];
    await expectOpen(h, newcomers, [true]);
    newcomers.push(track(await halfOpen(h, '127.0.0.2')));
    // The second newcomer closed the first (pending, the oldest such); the answers are still owed.
    await expectOpen(h, newcomers, [false, true]);
    await expectOpen(h, busy, Array(busy.length).fill(true));
    for (const res of h.held) res.end('ok');
    expect(await Promise.all(answers)).to.deep.equal(Array(busy.length).fill('HTTP/1.1 200 OK'));
    expect(h.reclaimed).to.deep.equal(['handshake']);
  });

  it(`one address holds at most ${SETTINGS.maxConnectionsPerClient}; its next is closed at once`, async () => {
    const mine = [];
    for (let i = 0; i < SETTINGS.maxConnectionsPerClient + 1; i++) mine.push(track(await halfOpen(h, '127.0.0.3')));
    await expectOpen(h, mine, [...Array(SETTINGS.maxConnectionsPerClient).fill(true), false]);
    expect(h.reclaimed).to.deep.equal(['per-client']);
  });

  it('10x the cap of half-open connections from 16 addresses: a new client still gets its answer', async () => {
    const flood = [];
    for (let i = 0; i < 10 * MAX_CONNECTIONS; i++) {
      const socket = tcpConnect({ host: '127.0.0.1', port: h.port, localAddress: `127.0.1.${1 + (i % 16)}` });
      socket.on('error', () => {});
      flood.push(track(socket));
    }
    // Every flood connection is in the accept queue (or already taken from it and closed) before
    // the first client dials, so the server handles all of them before that client is secured.
    await Promise.all(flood.map((s) => new Promise((resolve) => s.once('connect', resolve).once('close', resolve))));
    for (let i = 0; i < 5; i++) {
      const client = track(await secured(h, '127.0.0.2'));
      expect(await request(client)).to.equal('HTTP/1.1 200 OK');
    }
    expect(h.reclaimed.filter((r) => r === 'handshake').length).to.be.above(5 * MAX_CONNECTIONS);
  });
});
