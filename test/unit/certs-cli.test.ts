import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { generateRsaKeyPem } from '../../certs/x509.ts';
import { type CertsCommandDeps, certsCommand } from '../../cli/certs-command.ts';
import { run } from '../../cli/main.ts';
import { KubeApi } from '../../kube/api-client.ts';
import { AutoAdvancingClock, FakeApiServer, ManualClock } from '../support/kube/index.ts';

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

function logLines(text: string): Array<Record<string, unknown>> {
  return text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('cli: staticsite certs bootstrap', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certs-cli-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('--out-dir issues into the directory, logs JSON, and a second run changes nothing', async function () {
    this.timeout(30_000);
    const args = [
      'certs',
      'bootstrap',
      '--service',
      'web',
      '--namespace',
      'apps',
      '--san',
      '127.0.0.1',
      '--out-dir',
      dir,
    ];
    const first = await cli(...args);
    expect(first.stderr).to.equal('');
    expect(first.code).to.equal(0);
    const done = logLines(first.stdout).find((l) => l.event === 'bootstrap-done');
    expect(done).to.include({ changed: true, component: 'staticsite-certs', level: 'info' });
    const leaf = new X509Certificate(await readFile(join(dir, 'tls.crt')));
    expect(leaf.subjectAltName).to.equal(
      'DNS:web, DNS:web.apps, DNS:web.apps.svc, DNS:web.apps.svc.cluster.local, IP Address:127.0.0.1',
    );
    const second = await cli(...args);
    expect(second.code).to.equal(0);
    expect(logLines(second.stdout).find((l) => l.event === 'bootstrap-done')).to.include({ changed: false });
  });

  it('usage errors exit 2 with one line and the usage', async () => {
    const missing = await cli('certs', 'bootstrap', '--service', 'web', '--namespace', 'apps');
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.include(
      'staticsite certs: exactly one of --out-dir and --secret is required\nusage: staticsite certs bootstrap',
    );
    const both = await cli(
      'certs',
      'bootstrap',
      '--service',
      'web',
      '--namespace',
      'apps',
      '--out-dir',
      dir,
      '--secret',
      's',
    );
    expect(both.code).to.equal(2);
    const sub = await cli('certs', 'frob');
    expect(sub.code).to.equal(2);
    expect(sub.stderr).to.include('unknown subcommand "frob"');
    const interval = await cli(
      'certs',
      'bootstrap',
      '--service',
      'w',
      '--namespace',
      'n',
      '--out-dir',
      dir,
      '--check-interval',
      '1h',
    );
    expect(interval.stderr).to.include(
      '--check-interval, --metrics-port, --metrics-bind-address and --health-probe-bind-address need --watch',
    );
  });

  it('a failure rejects with the message naming the object (main prints it, exit 1)', async () => {
    const server = new FakeApiServer();
    server.seed('/api/v1/namespaces/apps/secrets', { metadata: { name: 'web-tls' }, type: 'Opaque' });
    const io = { out: [] as string[], err: [] as string[] };
    const deps: CertsCommandDeps = {
      clock: new ManualClock('2026-03-01T00:00:00Z'),
      kubeApi: async () => new KubeApi(server),
      generateKey: () => generateRsaKeyPem(1024),
    };
    await certsCommand(
      ['bootstrap', '--service', 'web', '--namespace', 'apps', '--secret', 'web-tls'],
      { stdout: (t) => io.out.push(t), stderr: (t) => io.err.push(t) },
      deps,
    ).then(
      () => expect.fail('should fail'),
      (error: Error) => expect(error.message).to.include('Secret apps/web-tls has type "Opaque"'),
    );
    const failed = logLines(io.out.join('')).find((l) => l.event === 'bootstrap-failed');
    expect(failed).to.include({ level: 'error', code: 'WrongSecretType' });
    expect(failed?.err).to.include('Secret apps/web-tls has type "Opaque"');
  });

  it('--watch runs until aborted, sleeping on the injected clock', async () => {
    const controller = new AbortController();
    const clock = new AutoAdvancingClock('2026-03-01T00:00:00Z', () => {
      if (clock.delays.length === 3) controller.abort();
    });
    const out: string[] = [];
    const code = await certsCommand(
      ['bootstrap', '--service', 'web', '--namespace', 'apps', '--out-dir', dir, '--watch', '--check-interval', '12h'],
      { stdout: (t) => out.push(t), stderr: () => undefined },
      {
        clock,
        signal: controller.signal,
        kubeApi: async () => new KubeApi(new FakeApiServer()),
        generateKey: () => generateRsaKeyPem(1024),
      },
    );
    expect(code).to.equal(0);
    expect(clock.delays).to.deep.equal([12 * 3_600_000, 12 * 3_600_000, 12 * 3_600_000]);
    const events = logLines(out.join('')).map((l) => l.event);
    expect(events.filter((e) => e === 'bootstrap-done')).to.have.length(3);
    expect(events.at(-1)).to.equal('watch-stopped');
  });

  it('--watch --metrics-port serves the expiry and run metrics, /healthz and /readyz', async () => {
    const controller = new AbortController();
    const out: string[] = [];
    let scraped = '';
    let ready: [number, string] = [0, ''];
    let healthy = 0;
    // While the loop sleeps after its first pass: scrape, probe, stop.
    const clock = new AutoAdvancingClock(new Date(), async () => {
      const port = logLines(out.join('')).find((l) => l.event === 'status-listening')?.port;
      scraped = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const readyz = await fetch(`http://127.0.0.1:${port}/readyz`);
      ready = [readyz.status, await readyz.text()];
      healthy = (await fetch(`http://127.0.0.1:${port}/healthz`)).status;
      controller.abort();
    });
    await certsCommand(
      ['bootstrap', '--service', 'web', '--namespace', 'apps', '--out-dir', dir, '--watch', '--metrics-port', '0'],
      { stdout: (t) => out.push(t), stderr: () => undefined },
      {
        clock,
        signal: controller.signal,
        kubeApi: async () => new KubeApi(new FakeApiServer()),
        generateKey: () => generateRsaKeyPem(1024),
      },
    );
    const serving = new X509Certificate(await readFile(join(dir, 'tls.crt')));
    expect(scraped).to.include(
      `staticsite_certs_expiry_timestamp_seconds{cert="serving"} ${new Date(serving.validTo).getTime() / 1000}`,
    );
    expect(scraped).to.include('staticsite_certs_bootstrap_runs_total{outcome="ok"} 1');
    expect(scraped).to.include('staticsite_certs_ca_bundle_certificates 1');
    expect(ready).to.deep.equal([200, 'ok']); // k8s.io/apiserver healthz.go: a healthy probe answers "ok"
    expect(healthy).to.equal(200);
  });
});
