/**
 * Secure metrics (the default, as controller-runtime's): the built controller with a cluster serves
 * its metrics port over HTTPS, and /metrics only to a bearer the API server authenticates
 * (TokenReview) and allows `get /metrics` (SubjectAccessReview), with controller-runtime's answers;
 * the probes stay open; `--metrics-secure=false` is plain HTTP.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildCrd } from '../../api/index.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd } from '../../devenv/crds.ts';
import { ManagedProcess } from '../../devenv/managed-process.ts';
import { metricsReaderToken, observe, observedStatus } from '../../devenv/observed.ts';
import { freePort } from '../../devenv/ports.ts';
import { builtCli } from '../../devenv/webhook-process.ts';
import { testCluster } from '../support/shared.ts';

const NS = 'secure-metrics';

describe('e2e: secure metrics (the built controller)', function () {
  this.timeout(120_000);
  let cp: ControlPlane;
  let dir: string;

  before(async () => {
    cp = (await testCluster()).controlPlane;
    await installCrd(cp.admin, buildCrd());
    await cp.ensureNamespace(NS);
    dir = await mkdtemp(join(tmpdir(), 'secure-metrics-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  async function controller(extra: string[]): Promise<{ proc: ManagedProcess; port: number }> {
    const port = await freePort();
    const proc = new ManagedProcess('controller', {
      command: process.execPath,
      args: [
        builtCli(),
        'controller',
        `--kubeconfig=${cp.kubeconfigPath}`,
        `--namespace=${NS}`,
        `--records-dir=${join(dir, 'records')}`,
        `--metrics-bind-address=127.0.0.1:${port}`,
        ...extra,
      ],
      logPath: join(dir, `controller-${port}.log`),
    });
    return { proc, port };
  }

  it('/metrics: 401 without a token or with one the API server rejects, 403 without the right, 200 with it', async () => {
    const { proc, port } = await controller([]);
    try {
      const url = (path: string) => `https://127.0.0.1:${port}${path}`;
      await eventually('ready over HTTPS', async () => (await observedStatus(url('/readyz'))) === 200);
      expect(await observe(url('/metrics'))).to.deep.equal({ status: 401, text: 'Unauthorized\n' });
      expect(await observe(url('/metrics'), 'not-a-token')).to.deep.equal({ status: 401, text: 'Unauthorized\n' });

      const nobody = await cp.serviceAccountCredentials(NS, 'nobody');
      expect(await observe(url('/metrics'), nobody.token)).to.deep.equal({
        status: 403,
        text: `Authorization denied for user system:serviceaccount:${NS}:nobody\n`,
      });

      const token = await metricsReaderToken(cp);
      const scraped = await observe(url('/metrics'), token);
      expect(scraped.status).to.equal(200);
      expect(scraped.text).to.include('controller_runtime_reconcile_total');
      // The probes are for the kubelet, which brings no token.
      expect(await observedStatus(url('/healthz'))).to.equal(200);
      // Answers are cached as controller-runtime caches them: more scrapes, no more reviews.
      for (let i = 0; i < 5; i++) await observe(url('/metrics'), token);
      const after = (await observe(url('/metrics'), token)).text;
      const reviews = (resource: string) =>
        after
          .split('\n')
          .filter(
            (l) => l.startsWith('staticsite_controller_api_requests_total{') && l.includes(`resource="${resource}"`),
          )
          .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
      // One per distinct token (three) and one per distinct user asked (two): none for the repeats.
      expect(reviews('tokenreviews')).to.equal(3);
      expect(reviews('subjectaccessreviews')).to.equal(2);
    } finally {
      await proc.stop();
    }
  });

  it('--metrics-secure=false: plain HTTP, /metrics to anyone', async () => {
    const { proc, port } = await controller(['--metrics-secure=false']);
    try {
      await eventually(
        'ready over HTTP',
        async () => (await observedStatus(`http://127.0.0.1:${port}/readyz`)) === 200,
      );
      expect(await observedStatus(`http://127.0.0.1:${port}/metrics`)).to.equal(200);
    } finally {
      await proc.stop();
    }
  });

  it('a bad --metrics-secure exits 2 naming the flag', async () => {
    const { spawnSync } = await import('node:child_process');
    const run = spawnSync(process.execPath, [builtCli(), 'controller', '--metrics-secure=yes'], { encoding: 'utf8' });
    expect(run.status).to.equal(2);
    expect(run.stderr).to.include('--metrics-secure must be true or false, got "yes"');
  });
});
