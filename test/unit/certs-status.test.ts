import { expect } from 'chai';
import { Registry } from 'prom-client';
import { CertsError } from '../../certs/errors.ts';
import { PassStatus } from '../../certs/status-server.ts';
import { ProbesServer } from '../../observability/probes-server.ts';

describe('certs: --watch readiness (the bootstrap check on the probes server)', () => {
  let server: ProbesServer;
  let base: string;
  const status = new PassStatus();

  before(async () => {
    server = new ProbesServer({ ready: [status], registry: new Registry() });
    base = `http://127.0.0.1:${await server.listen(0, '127.0.0.1')}`;
  });
  after(() => server.close());

  async function get(path: string): Promise<[number, string]> {
    const res = await fetch(`${base}${path}`);
    return [res.status, await res.text()];
  }

  // Expected texts: k8s.io/apiserver pkg/server/healthz/healthz.go ("[-]%s failed: reason withheld",
  // "%s check failed" with 500, "ok" with 200, "[+]%s ok" and "%s check passed" with ?verbose).
  it('/readyz fails until a pass succeeds, passes after, and fails again when the latest pass failed', async () => {
    expect(status.check()).to.deep.equal({ ok: false, reason: 'no pass has completed yet' });
    expect(await get('/readyz')).to.deep.equal([500, '[-]bootstrap failed: reason withheld\nreadyz check failed\n']);
    status.succeeded(new Date('2026-03-01T00:00:00Z'));
    expect(await get('/readyz')).to.deep.equal([200, 'ok']);
    expect(await get('/readyz?verbose')).to.deep.equal([200, '[+]bootstrap ok\nreadyz check passed\n']);
    status.failed(new CertsError('Forbidden', 'cannot get Secret ns/x: forbidden'));
    expect(status.check()).to.deep.equal({
      ok: false,
      reason: 'last pass failed: cannot get Secret ns/x: forbidden',
    });
    expect(await get('/readyz')).to.deep.equal([500, '[-]bootstrap failed: reason withheld\nreadyz check failed\n']);
    status.succeeded(new Date('2026-03-01T00:10:00Z'));
    expect((await get('/readyz'))[0]).to.equal(200);
  });

  it('/healthz and /livez are ok, unknown paths 404, other methods 405', async () => {
    expect(await get('/healthz')).to.deep.equal([200, 'ok']);
    expect(await get('/livez?verbose')).to.deep.equal([200, '[+]ping ok\nlivez check passed\n']);
    expect((await get('/nope'))[0]).to.equal(404);
    expect((await fetch(`${base}/readyz`, { method: 'POST' })).status).to.equal(405);
  });
});
