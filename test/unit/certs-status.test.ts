import type { Server } from 'node:http';
import { expect } from 'chai';
import pino from 'pino';
import { Registry } from 'prom-client';
import { CertsError } from '../../certs/errors.ts';
import { PassStatus, serveStatus } from '../../certs/status-server.ts';

describe('certs: --watch status endpoint', () => {
  let server: Server;
  let base: string;
  const status = new PassStatus();

  before(async () => {
    server = await serveStatus({
      registry: new Registry(),
      status,
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
    });
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  async function get(path: string): Promise<[number, string]> {
    const res = await fetch(`${base}${path}`);
    return [res.status, await res.text()];
  }

  it('/readyz is 503 until a pass succeeds, 200 after, and 503 with the reason when the latest pass failed', async () => {
    expect(await get('/readyz')).to.deep.equal([503, 'no pass has completed yet\n']);
    status.succeeded(new Date('2026-03-01T00:00:00Z'));
    expect(await get('/readyz')).to.deep.equal([
      200,
      'ok: certificates stored and CA bundle injected at 2026-03-01T00:00:00.000Z\n',
    ]);
    status.failed(new CertsError('Forbidden', 'cannot get Secret ns/x: forbidden'));
    expect(await get('/readyz')).to.deep.equal([503, 'last pass failed: cannot get Secret ns/x: forbidden\n']);
    status.succeeded(new Date('2026-03-01T00:10:00Z'));
    expect((await get('/readyz'))[0]).to.equal(200);
  });

  it('/healthz is 200, unknown paths 404, other methods 405', async () => {
    expect(await get('/healthz')).to.deep.equal([200, 'ok\n']);
    expect((await get('/nope'))[0]).to.equal(404);
    expect((await fetch(`${base}/readyz`, { method: 'POST' })).status).to.equal(405);
  });
});
