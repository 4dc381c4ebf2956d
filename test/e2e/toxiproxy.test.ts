import { createServer, get, type Server } from 'node:http';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { expect } from 'chai';
import { Toxiproxy, ToxiproxyApiError, type ToxiproxyProxy } from '../../devenv/toxiproxy.ts';

interface Answer {
  status: number;
  body: string;
}

class ClientTimeout extends Error {}

function hostAndPort(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
}

/** A GET through `address` (`host:port`) on a connection of its own, given up after `timeoutMs` without data. */
function getThrough(address: string, timeoutMs = 5_000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = get({ ...hostAndPort(address), path: '/', agent: false, timeout: timeoutMs }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new ClientTimeout(`no answer within ${timeoutMs} ms`)));
    request.on('error', reject);
  });
}

async function failureOf(attempt: Promise<unknown>): Promise<NodeJS.ErrnoException> {
  try {
    await attempt;
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
  throw new Error('expected the request to fail, it succeeded');
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('toxiproxy (devenv/toxiproxy.ts against the real toxiproxy-server)', () => {
  let toxiproxy: Toxiproxy;
  let upstream: Server;
  let upstreamRequests = 0;
  let proxy: ToxiproxyProxy;

  before(async function () {
    this.timeout(30 * 60_000); // a cold cache builds toxiproxy from source
    upstream = createServer((_, response) => {
      upstreamRequests++;
      response.end('hello from upstream');
    });
    // Idle connections stay open: only toxiproxy closes them in these tests.
    upstream.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as { port: number };
    toxiproxy = await Toxiproxy.start();
    proxy = await toxiproxy.createProxy('upstream', `127.0.0.1:${port}`);
  });

  afterEach(async () => {
    await toxiproxy?.reset();
  });

  after(async () => {
    await toxiproxy?.stop();
    upstream?.closeAllConnections();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  it('passes traffic through the proxy to the upstream, on the port it reports', async () => {
    expect(proxy.listen).to.match(/^127\.0\.0\.1:\d+$/);
    expect(proxy.listen).to.not.equal('127.0.0.1:0');
    const before = upstreamRequests;
    const answer = await getThrough(proxy.listen);
    expect(answer).to.deep.equal({ status: 200, body: 'hello from upstream' });
    expect(upstreamRequests).to.equal(before + 1);
  });

  it('delays the answer by at least 300 ms with a 300 ms latency toxic, until removeToxic removes it', async () => {
    const toxic = await toxiproxy.addToxic(proxy, {
      type: 'latency',
      stream: 'downstream',
      attributes: { latency: 300 },
    });
    expect(toxic).to.include({ name: 'latency_downstream', type: 'latency', stream: 'downstream', toxicity: 1 });
    expect((await toxiproxy.getProxy(proxy)).toxics.map((t) => t.name)).to.deep.equal(['latency_downstream']);

    const started = performance.now();
    expect((await getThrough(proxy.listen)).body).to.equal('hello from upstream');
    expect(performance.now() - started).to.be.at.least(300);

    await toxiproxy.removeToxic(proxy, toxic.name);
    expect((await toxiproxy.getProxy(proxy)).toxics).to.deep.equal([]);
    expect((await getThrough(proxy.listen)).status).to.equal(200);
  });

  it('partitions when disabled: open connections are cut, new ones refused; enabled again, traffic passes', async () => {
    const socket = connect(hostAndPort(proxy.listen));
    socket.on('error', () => {});
    const closed = new Promise((resolve) => socket.once('close', resolve));
    // One request answered on this connection: it is established end to end before the partition.
    const answered = new Promise((resolve) => socket.once('data', resolve));
    socket.write('GET / HTTP/1.1\r\nHost: upstream\r\n\r\n');
    await within(answered, 5_000, 'an answer on the kept-alive connection');

    const disabled = await toxiproxy.setEnabled(proxy, false);
    expect(disabled.enabled).to.equal(false);
    await within(closed, 2_000, 'the open connection closed by the partition');
    expect((await failureOf(getThrough(proxy.listen))).code).to.equal('ECONNREFUSED');

    const enabled = await toxiproxy.setEnabled(proxy, true);
    expect(enabled).to.include({ enabled: true, listen: proxy.listen });
    expect((await getThrough(proxy.listen)).body).to.equal('hello from upstream');
  });

  it('resets the connection (ECONNRESET) with a reset_peer toxic', async () => {
    await toxiproxy.addToxic(proxy, { type: 'reset_peer', stream: 'upstream', attributes: { timeout: 0 } });
    const before = upstreamRequests;
    const failure = await failureOf(getThrough(proxy.listen));
    expect(failure.code).to.equal('ECONNRESET');
    // A reset, not an orderly close (which node's http client also reports as ECONNRESET, "socket hang up").
    expect(failure.message).to.not.include('socket hang up');
    expect(upstreamRequests).to.equal(before);
  });

  it("holds a request with a timeout toxic until the client's own timeout gives up", async () => {
    await toxiproxy.addToxic(proxy, { type: 'timeout', stream: 'upstream', attributes: { timeout: 0 } });
    const before = upstreamRequests;
    const started = performance.now();
    const failure = await failureOf(getThrough(proxy.listen, 1_000));
    const elapsed = performance.now() - started;
    expect(failure).to.be.instanceOf(ClientTimeout);
    expect(elapsed).to.be.at.least(950);
    expect(upstreamRequests).to.equal(before);

    await toxiproxy.removeToxic(proxy, 'timeout_upstream');
    expect((await getThrough(proxy.listen)).status).to.equal(200);
  });

  it('reset() enables every proxy and removes every toxic', async () => {
    await toxiproxy.addToxic(proxy, { type: 'timeout', stream: 'downstream', attributes: { timeout: 0 } });
    await toxiproxy.setEnabled(proxy, false);
    await toxiproxy.reset();
    expect(await toxiproxy.getProxy(proxy)).to.include({ enabled: true, listen: proxy.listen });
    expect((await toxiproxy.getProxy(proxy)).toxics).to.deep.equal([]);
    expect((await getThrough(proxy.listen, 2_000)).status).to.equal(200);
  });

  it("throws the API's status and body when it refuses a request", async () => {
    const missing = await failureOf(
      toxiproxy.addToxic('no-such-proxy', { type: 'latency', attributes: { latency: 1 } }),
    );
    expect(missing).to.be.instanceOf(ToxiproxyApiError);
    expect(missing).to.include({ status: 404 });
    expect(missing.message).to.include('404').and.to.include('proxy not found');

    const duplicate = await failureOf(toxiproxy.createProxy('upstream', proxy.upstream));
    expect(duplicate).to.include({ status: 409 });
    expect(duplicate.message).to.include('proxy already exists');
  });
});
