import { expect } from 'chai';
import { pino } from 'pino';
import { Counter, Registry } from 'prom-client';
import { type Check, PING, Probes, ProbesServer } from '../../observability/probes-server.ts';

/** healthz.NamedCheck("bad", ...) of k8s.io/apiserver's healthz_test.go: always fails with "this will fail". */
const BAD: Check = { name: 'bad', check: () => ({ ok: false, reason: 'this will fail' }) };

function logCapture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('kube: probes server', () => {
  // The expected bodies are those of testMultipleChecks in k8s.io/apiserver@v0.37.2
  // pkg/server/healthz/healthz_test.go (name: the first path segment), which healthz.go produces:
  // "[+]<name> ok", "[-]<name> failed: reason withheld", "[+]<name> excluded: ok",
  // "warn: some health checks cannot be excluded: no matches for %s", "%s check passed",
  // "%s check failed" (http.Error: 500 and a final newline), and a bare "ok" when healthy.
  const cases: Array<{ query: string; bad: boolean; status: number; body: (name: string) => string }> = [
    { query: '?verbose', bad: false, status: 200, body: (n) => `[+]ping ok\n${n} check passed\n` },
    { query: '?exclude=dontexist', bad: false, status: 200, body: () => 'ok' },
    { query: '?exclude=bad', bad: true, status: 200, body: () => 'ok' },
    {
      query: '?verbose=true&exclude=bad',
      bad: true,
      status: 200,
      body: (n) => `[+]ping ok\n[+]bad excluded: ok\n${n} check passed\n`,
    },
    {
      query: '?verbose=true&exclude=dontexist',
      bad: false,
      status: 200,
      body: (n) =>
        `[+]ping ok\nwarn: some health checks cannot be excluded: no matches for "dontexist"\n${n} check passed\n`,
    },
    { query: '', bad: false, status: 200, body: () => 'ok' },
    {
      query: '?verbose',
      bad: true,
      status: 500,
      body: (n) => `[+]ping ok\n[-]bad failed: reason withheld\n${n} check failed\n`,
    },
    {
      query: '',
      bad: true,
      status: 500,
      body: (n) => `[+]ping ok\n[-]bad failed: reason withheld\n${n} check failed\n`,
    },
  ];

  for (const probe of ['healthz', 'livez', 'readyz'] as const) {
    it(`/${probe} answers as k8s.io/apiserver's healthz handler does`, async () => {
      for (const { query, bad, status, body } of cases) {
        const checks = bad ? [PING, BAD] : [PING];
        const server = new ProbesServer({ live: checks, ready: checks, registry: new Registry() });
        const port = await server.listen(0, '127.0.0.1');
        try {
          const res = await fetch(`http://127.0.0.1:${port}/${probe}${query}`);
          expect([res.status, await res.text()], `/${probe}${query}`).to.deep.equal([status, body(probe)]);
          expect(res.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
          expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
        } finally {
          await server.close();
        }
      }
    });
  }

  it('installs the ping check when a probe has none (InstallPathHandler with no checks)', () => {
    const probes = new Probes({});
    expect(probes.answer('/readyz?verbose')?.body).to.equal('[+]ping ok\nreadyz check passed\n');
    expect(probes.answer('/livez?verbose')?.body).to.equal('[+]ping ok\nlivez check passed\n');
  });

  it('/healthz and /livez run the liveness checks, /readyz the readiness checks', () => {
    const probes = new Probes({ live: [PING], ready: [PING, BAD] });
    expect(probes.answer('/healthz')).to.deep.include({ status: 200, body: 'ok' });
    expect(probes.answer('/livez')).to.deep.include({ status: 200, body: 'ok' });
    expect(probes.answer('/readyz')).to.deep.include({ status: 500 });
  });

  it('logs the withheld reason (healthz.go: "[-]%s failed: %v"), once per change', () => {
    const { logger, lines } = logCapture();
    let failing = true;
    const flaky: Check = {
      name: 'flaky',
      check: () => (failing ? { ok: false, reason: 'watch down for 45s' } : { ok: true }),
    };
    const probes = new Probes({ ready: [flaky] }, logger);
    expect(probes.answer('/readyz')?.body).to.equal('[-]flaky failed: reason withheld\nreadyz check failed\n');
    probes.answer('/readyz');
    failing = false;
    expect(probes.answer('/readyz')?.body).to.equal('ok');
    expect(lines.map(({ level, msg, failed, checks }) => ({ level, msg, failed, checks }))).to.deep.equal([
      { level: 40, msg: 'readyz check failed', failed: ['flaky'], checks: ['[-]flaky failed: watch down for 45s'] },
      { level: 30, msg: 'readyz check passed', failed: undefined, checks: undefined },
    ]);
  });

  // Not upstream: a check's public note (a fixed text) is a "warn:" line, the form healthz.go uses
  // for its own remarks after the check lines; the check lines keep the upstream texts.
  it('lists public notes as warn: lines with ?verbose and on failure, and logs them', () => {
    const { logger, lines } = logCapture();
    const off: Check = { name: 'rule', check: () => ({ ok: true, note: 'standalone: the rule is off' }) };
    const missing: Check = {
      name: 'cache',
      check: () => ({ ok: false, reason: 'not synced', note: 'cache not synced' }),
    };
    expect(new Probes({ ready: [off] }, logger).answer('/readyz')?.body).to.equal('ok');
    expect(new Probes({ ready: [off] }).answer('/readyz?verbose')?.body).to.equal(
      '[+]rule ok\nwarn: standalone: the rule is off\nreadyz check passed\n',
    );
    expect(new Probes({ ready: [off, missing] }).answer('/readyz')?.body).to.equal(
      '[+]rule ok\n[-]cache failed: reason withheld\nwarn: standalone: the rule is off\nwarn: cache not synced\nreadyz check failed\n',
    );
    expect(lines).to.have.length(1);
    expect(lines[0]).to.deep.include({ msg: 'readyz check passed', notes: ['standalone: the rule is off'] });
  });

  it('serves /metrics from the registry; unknown paths are 404 and other methods 405', async () => {
    const registry = new Registry();
    new Counter({ name: 'probes_test_total', help: 'a counter', registers: [registry] }).inc(3);
    const server = new ProbesServer({ registry });
    const port = await server.listen(0, '127.0.0.1');
    try {
      const base = `http://127.0.0.1:${port}`;
      const metrics = await fetch(`${base}/metrics`);
      expect(metrics.headers.get('content-type')).to.equal(registry.contentType);
      expect(await metrics.text()).to.include('probes_test_total 3');
      for (const path of ['/nope', '/readyz/ping', '/healthz/', '/']) {
        const res = await fetch(`${base}${path}`);
        expect([res.status, await res.text()], path).to.deep.equal([404, '404 page not found\n']);
      }
      expect((await fetch(`${base}/readyz`, { method: 'POST' })).status).to.equal(405);
      expect((await fetch(`${base}/readyz`, { method: 'HEAD' })).status).to.equal(200);
    } finally {
      await server.close();
    }
  });

  it('a check that throws is a bug: 500, logged, and the server keeps serving', async () => {
    const { logger, lines } = logCapture();
    const broken: Check = {
      name: 'broken',
      check: () => {
        throw new Error('cache gone');
      },
    };
    const server = new ProbesServer({ ready: [broken], registry: new Registry(), logger });
    const port = await server.listen(0, '127.0.0.1');
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect([res.status, await res.text()]).to.deep.equal([500, 'internal server error\n']);
      expect(lines.at(-1)).to.deep.include({ msg: 'probe failed', err: 'cache gone' });
      expect((await fetch(`http://127.0.0.1:${port}/livez`)).status).to.equal(200);
    } finally {
      await server.close();
    }
  });
});
