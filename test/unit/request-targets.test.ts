import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import {
  PING,
  PROBES_CONNECTION_SETTINGS,
  ProbesServer,
  parseRequestTarget,
} from '../../observability/probes-server.ts';
import { inProcessWebhook } from '../support/in-process-webhook.ts';

/** One raw HTTP/1.1 request (fetch would normalise the target); resolves with the status code. */
function rawStatus(port: number, method: string, target: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (status) {
        socket.destroy();
        resolve(Number(status[1]));
      }
    });
    socket.on('error', reject);
    socket.write(`${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  });
}

/** Targets a client may send that `new URL(target, base)` throws on: answered below 500, never a panic. */
const TARGETS = ['//', '//x/y', 'http://[::1', 'http://[::1/readyz'];

describe('request targets that do not parse as URLs', () => {
  it('parseRequestTarget: origin-form split at ?, absolute-form as a URL, anything else undefined', () => {
    expect(parseRequestTarget('//')).to.deep.include({ path: '//' });
    expect(parseRequestTarget('/readyz?verbose')?.query.has('verbose')).to.equal(true);
    expect(parseRequestTarget('http://h/readyz?exclude=a')?.path).to.equal('/readyz');
    expect(parseRequestTarget('http://[::1')).to.equal(undefined);
  });

  it('the probes and metrics port answers 400 or 404, not 500', async () => {
    const errors: unknown[] = [];
    const server = new ProbesServer({
      live: [PING],
      ready: [PING],
      registry: new Registry(),
      logger: { ...pino({ level: 'silent' }), error: (...args: unknown[]) => errors.push(args) } as never,
    });
    const port = await server.listen(0, '127.0.0.1');
    try {
      for (const method of ['GET', 'HEAD']) {
        for (const target of TARGETS) {
          const status = await rawStatus(port, method, target);
          expect(status, `${method} ${target}`).to.be.oneOf([400, 404]);
        }
      }
      expect(errors).to.deep.equal([]);
    } finally {
      await server.close();
    }
  });

  it("the webhook's listener answers 400 or 404 and counts no panic", async () => {
    const { listener, metrics } = inProcessWebhook();
    const server = createServer(listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      for (const method of ['GET', 'HEAD']) {
        for (const target of TARGETS) {
          expect(await rawStatus(port, method, target), `${method} ${target}`).to.be.oneOf([400, 404]);
        }
      }
      const panics = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name.endsWith('panics_total'));
      expect(panics?.values.reduce((sum, v) => sum + v.value, 0) ?? 0).to.equal(0);
    } finally {
      server.close();
    }
  });
});

describe('the probes and metrics port against slow and many clients', function () {
  this.timeout(30_000);

  it(`refuses connections beyond ${PROBES_CONNECTION_SETTINGS.maxConnections} and closes slow ones within the headers timeout`, async () => {
    const server = new ProbesServer({ live: [PING], ready: [PING], registry: new Registry() });
    const port = await server.listen(0, '127.0.0.1');
    const sockets: Socket[] = [];
    const closedAt: number[] = [];
    const started = Date.now();
    try {
      // Slowloris: each sends the start of a request, then nothing.
      for (let i = 0; i < PROBES_CONNECTION_SETTINGS.maxConnections + 72; i++) {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => {});
        socket.on('close', () => closedAt.push(Date.now() - started));
        socket.resume(); // read the server's 408 and end, or 'close' never comes
        socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
        sockets.push(socket);
      }
      await sleep(1_000);
      expect(closedAt.length, 'refused at once beyond the cap').to.be.at.least(72);
      // A probe still gets through once the slow ones are gone.
      const deadline =
        PROBES_CONNECTION_SETTINGS.headersTimeoutMs + 2 * PROBES_CONNECTION_SETTINGS.timeoutCheckIntervalMs;
      while (closedAt.length < sockets.length && Date.now() - started < deadline + 3_000) await sleep(100);
      expect(closedAt.length, 'every slow connection closed by the server').to.equal(sockets.length);
      expect(Math.max(...closedAt)).to.be.below(deadline + 1_000);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).to.equal(200);
    } finally {
      for (const socket of sockets) socket.destroy();
      await server.close();
    }
  });
});
