/**
 * `--metrics-bind-address HOST:PORT` and `--health-probe-bind-address HOST:PORT` on the three
 * processes as the image runs them (the built CLI): /metrics on the first, the probes on the
 * second (and still on the first), /metrics not on the probes port. A process with a cluster serves
 * its metrics port over HTTPS, /metrics to an authorized token (test/e2e/secure-metrics.test.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildCrd } from '../../api/index.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd } from '../../devenv/crds.ts';
import { ManagedProcess } from '../../devenv/managed-process.ts';
import { metricsReaderToken, observedStatus } from '../../devenv/observed.ts';
import { freePort } from '../../devenv/ports.ts';
import { loopbackCerts } from '../../devenv/webhook-certs.ts';
import { builtCli } from '../../devenv/webhook-process.ts';
import { testCluster } from '../support/shared.ts';

const status = (url: string, token?: string) => observedStatus(url, token);

describe('e2e: --metrics-bind-address and --health-probe-bind-address on the built CLI', function () {
  this.timeout(120_000);
  let dir: string;
  let cp: ControlPlane;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'observability-flags-'));
    cp = (await testCluster()).controlPlane;
    await installCrd(cp.admin, buildCrd());
    await cp.ensureNamespace('observability-flags');
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  /** `secure`: the process has a cluster, so its metrics server is HTTPS and asks for a token. */
  async function check(name: string, args: (metrics: number, probes: number) => string[], secure = false) {
    const scheme = secure ? 'https' : 'http';
    const token = secure ? await metricsReaderToken(cp) : undefined;
    const [metrics, probes] = [await freePort(), await freePort()];
    const proc = new ManagedProcess(name, {
      command: process.execPath,
      args: [builtCli(), ...args(metrics, probes)],
      logPath: join(dir, `${name}.log`),
    });
    try {
      await eventually(
        `${name} ready on the probes port`,
        async () => (await status(`http://127.0.0.1:${probes}/readyz`)) === 200,
      );
      expect(await status(`http://127.0.0.1:${probes}/healthz`)).to.equal(200);
      expect(await status(`http://127.0.0.1:${probes}/metrics`)).to.equal(404);
      expect(await status(`${scheme}://127.0.0.1:${metrics}/metrics`, token)).to.equal(200);
      expect(await status(`${scheme}://127.0.0.1:${metrics}/readyz`)).to.equal(200);
    } finally {
      await proc.stop();
    }
  }

  it('the webhook', async () => {
    const certs = await loopbackCerts();
    try {
      await check('webhook', (metrics, probes) => [
        'webhook',
        `--cert-dir=${certs.dir}`,
        '--port=0',
        '--host=127.0.0.1',
        `--metrics-bind-address=127.0.0.1:${metrics}`,
        `--health-probe-bind-address=127.0.0.1:${probes}`,
      ]);
    } finally {
      await rm(certs.dir, { recursive: true, force: true });
    }
  });

  it('the cert bootstrapper in --watch mode', async () => {
    await check('certs', (metrics, probes) => [
      'certs',
      'bootstrap',
      '--service=s',
      '--namespace=n',
      `--out-dir=${join(dir, 'certs')}`,
      '--watch',
      `--metrics-bind-address=127.0.0.1:${metrics}`,
      `--health-probe-bind-address=127.0.0.1:${probes}`,
    ]);
  });

  it('the controller', async () => {
    await check(
      'controller',
      (metrics, probes) => [
        'controller',
        `--kubeconfig=${cp.kubeconfigPath}`,
        '--namespace=observability-flags',
        `--records-dir=${join(dir, 'records')}`,
        `--metrics-bind-address=127.0.0.1:${metrics}`,
        `--health-probe-bind-address=127.0.0.1:${probes}`,
      ],
      true,
    );
  });
});
