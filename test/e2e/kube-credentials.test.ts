/**
 * Credentials against the real API server (docs/kube-credentials.md): a client-certificate
 * kubeconfig and the in-cluster service account authenticate without @kubernetes/client-node, and
 * a kubeconfig with an exec plugin goes through client-node. Who the server says we are comes from
 * a SelfSubjectReview, which every authenticated user may create.
 */

import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { dump } from 'js-yaml';
import { buildCrd, CRD_NAME } from '../../api/index.ts';
import { SystemClock } from '../../clock/clock.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { observedStatus } from '../../devenv/observed.ts';
import { loopbackCerts } from '../../devenv/webhook-certs.ts';
import { WebhookProcess } from '../../devenv/webhook-process.ts';
import type { ClusterConfig } from '../../kube/cluster.ts';
import { loadClusterConfig } from '../../kube/cluster-config.ts';
import { HttpsTransport } from '../../kube/transport.ts';
import { testCluster } from '../support/shared.ts';

const clock = new SystemClock();

/** The user the API server authenticates the connection as. */
async function whoAmI(config: ClusterConfig): Promise<string> {
  const transport = await HttpsTransport.connect(config, { clock });
  try {
    const res = await transport.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    expect(res.status, res.text).to.equal(201);
    return (res.body as { status: { userInfo: { username: string } } }).status.userInfo.username;
  } finally {
    transport.close();
  }
}

/** Refuses to resolve @kubernetes/client-node: a process started with it dies if anything imports it. */
const NO_CLIENT_NODE = `data:text/javascript,${encodeURIComponent(`
  import { registerHooks } from 'node:module';
  registerHooks({
    resolve(specifier, context, next) {
      if (specifier.startsWith('@kubernetes/client-node')) throw new Error('imported ' + specifier);
      return next(specifier, context);
    },
  });`)}`;

describe('e2e: API server credentials (kube/cluster-config.ts)', function () {
  this.timeout(120_000);
  let cp: ControlPlane;
  let dir: string;

  before(async () => {
    cp = (await testCluster()).controlPlane;
    dir = await mkdtemp(join(tmpdir(), 'kube-credentials-'));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('the in-cluster service account: token, CA and namespace files, server from the service variables', async () => {
    const credentials = await cp.serviceAccountCredentials('credentials-test', 'operator');
    const sa = join(dir, 'serviceaccount');
    await mkdir(sa);
    await writeFile(join(sa, 'token'), credentials.token ?? '');
    await writeFile(join(sa, 'ca.crt'), credentials.caPem);
    await writeFile(join(sa, 'namespace'), 'credentials-test');
    const server = new URL(credentials.server);
    const config = await loadClusterConfig(undefined, {
      clock,
      env: { KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port },
      serviceAccountDir: sa,
    });
    expect(config.namespace).to.equal('credentials-test');
    expect(await whoAmI(config)).to.equal('system:serviceaccount:credentials-test:operator');
  });

  it('a kubeconfig with a client certificate (the control plane admin)', async () => {
    const config = await loadClusterConfig(cp.kubeconfigPath, { clock, env: {} });
    expect(await whoAmI(config)).to.equal('admin');
  });

  it('a kubeconfig with an exec plugin goes through client-node and authenticates as the plugin says', async () => {
    const credentials = await cp.serviceAccountCredentials('credentials-test', 'exec-user');
    const plugin = join(dir, 'credential-plugin.sh');
    const execCredential = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: credentials.token },
    });
    await writeFile(plugin, `#!/bin/sh\necho '${execCredential}'\n`);
    await chmod(plugin, 0o755);
    const file = join(dir, 'exec.kubeconfig');
    await writeFile(
      file,
      dump({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'c',
            cluster: {
              server: credentials.server,
              'certificate-authority-data': Buffer.from(credentials.caPem).toString('base64'),
            },
          },
        ],
        users: [
          {
            name: 'u',
            user: {
              exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' },
            },
          },
        ],
        contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'ctx',
      }),
    );
    const config = await loadClusterConfig(file, { clock, env: {} });
    expect(await whoAmI(config)).to.equal('system:serviceaccount:credentials-test:exec-user');
  });

  describe('the built webhook with --kubeconfig', () => {
    before(async () => installCrd(cp.admin, buildCrd()));
    after(async () => uninstallCrd(cp.admin, CRD_NAME));

    it('syncs its informer without ever importing @kubernetes/client-node', async () => {
      const certs = await loopbackCerts();
      // The hook makes any import of client-node throw, so the process would exit instead of being ready.
      const webhook = await WebhookProcess.start({
        certDir: certs.dir,
        kubeconfig: cp.kubeconfigPath,
        env: { NODE_OPTIONS: `--import=${NO_CLIENT_NODE}` },
      });
      try {
        expect(await observedStatus(webhook.metricsUrl('/readyz?verbose'))).to.equal(200);
      } finally {
        await webhook.stop();
        await rm(certs.dir, { recursive: true, force: true });
      }
    });
  });
});
