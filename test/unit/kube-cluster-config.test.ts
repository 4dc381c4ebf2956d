/**
 * kube/cluster-config.ts: the in-cluster service account and kubeconfig files, read as client-go
 * reads them (k8s.io/client-go rest/config.go InClusterConfig, transport/token_source.go,
 * tools/clientcmd). Expected values are client-go's rules; files are real, the clock is driven.
 */
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { dump } from 'js-yaml';
import { type ClusterConfigEnvironment, loadClusterConfig, NOT_IN_CLUSTER } from '../../kube/cluster-config.ts';
import { ManualClock } from '../support/kube/index.ts';

const CA = '-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n';

async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: Error) => error,
  );
}

describe('kube: cluster configuration without client-node', () => {
  let dir: string;
  let sa: string;
  let clock: ManualClock;
  let environment: (env: Record<string, string | undefined>) => ClusterConfigEnvironment;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cluster-config-'));
    sa = join(dir, 'serviceaccount');
    await mkdir(sa);
    await writeFile(join(sa, 'token'), 'token-1\n');
    await writeFile(join(sa, 'ca.crt'), CA);
    await writeFile(join(sa, 'namespace'), 'staticsite-system');
    clock = new ManualClock();
    environment = (env) => ({ clock, env, serviceAccountDir: sa, homeDir: join(dir, 'home') });
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  describe('in a pod (rest.InClusterConfig)', () => {
    const pod = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };

    it('server from the service variables, CA, bearer token and the namespace file', async () => {
      const config = await loadClusterConfig(undefined, environment(pod));
      expect(config.server).to.equal('https://10.96.0.1:443');
      expect(config.tls.ca?.toString()).to.equal(CA);
      expect(await config.authHeaders()).to.deep.equal({ authorization: 'Bearer token-1' });
      expect(config.namespace).to.equal('staticsite-system');
    });

    it('an IPv6 service host is bracketed (net.JoinHostPort)', async () => {
      const config = await loadClusterConfig(undefined, environment({ ...pod, KUBERNETES_SERVICE_HOST: 'fd00::1' }));
      expect(config.server).to.equal('https://[fd00::1]:443');
    });

    it('a host without a port is ErrNotInCluster', async () => {
      const error = await rejection(
        loadClusterConfig(undefined, environment({ KUBERNETES_SERVICE_HOST: '10.96.0.1' })),
      );
      expect(error.message).to.equal(NOT_IN_CLUSTER);
      expect(NOT_IN_CLUSTER).to.equal(
        'unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined',
      );
    });

    it('an unreadable token stops it; a missing CA does not (client-go logs and goes on)', async () => {
      await unlink(join(sa, 'ca.crt'));
      expect((await loadClusterConfig(undefined, environment(pod))).tls).to.deep.equal({});
      await unlink(join(sa, 'token'));
      const error = await rejection(loadClusterConfig(undefined, environment(pod)));
      expect(error.message).to.match(/^cannot read token file .*\/token: ENOENT/);
    });

    it('$POD_NAMESPACE wins over the namespace file, and without either it is default', async () => {
      expect((await loadClusterConfig(undefined, environment({ ...pod, POD_NAMESPACE: 'ops' }))).namespace).to.equal(
        'ops',
      );
      await unlink(join(sa, 'namespace'));
      expect((await loadClusterConfig(undefined, environment(pod))).namespace).to.equal('default');
    });

    it('reads the rotated token after 50 s, and keeps the last one when a read fails or is empty', async () => {
      const config = await loadClusterConfig(undefined, environment(pod));
      await writeFile(join(sa, 'token'), 'token-2');
      await clock.advance(49_999);
      expect(await config.authHeaders()).to.deep.equal({ authorization: 'Bearer token-1' });
      await clock.advance(1);
      expect(await config.authHeaders()).to.deep.equal({ authorization: 'Bearer token-2' });
      await writeFile(join(sa, 'token'), '\n');
      await clock.advance(50_000);
      expect(await config.authHeaders()).to.deep.equal({ authorization: 'Bearer token-2' });
      await unlink(join(sa, 'token'));
      await clock.advance(50_000);
      expect(await config.authHeaders()).to.deep.equal({ authorization: 'Bearer token-2' });
    });

    it('an explicit --kubeconfig wins over the in-cluster service account', async () => {
      const file = join(dir, 'kubeconfig');
      await writeFile(file, kubeconfig({ server: 'https://api.example:6443' }, { token: 't' }));
      expect((await loadClusterConfig(file, environment(pod))).server).to.equal('https://api.example:6443');
    });
  });

  describe('a kubeconfig file (clientcmd)', () => {
    it('data fields, the token, insecure-skip-tls-verify, tls-server-name and the context namespace', async () => {
      const file = join(dir, 'kubeconfig');
      const b64 = (s: string) => Buffer.from(s).toString('base64');
      await writeFile(
        file,
        kubeconfig(
          {
            server: 'https://api.example:6443',
            'certificate-authority-data': b64(CA),
            'insecure-skip-tls-verify': true,
            'tls-server-name': 'kubernetes.default',
          },
          { token: 'abc', 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') },
          'web',
        ),
      );
      const config = await loadClusterConfig(file, environment({}));
      expect(config.server).to.equal('https://api.example:6443');
      expect(config.tls.ca?.toString()).to.equal(CA);
      expect(config.tls.cert?.toString()).to.equal('CERT');
      expect(config.tls.key?.toString()).to.equal('KEY');
      expect(config.tls.rejectUnauthorized).to.equal(false);
      expect(config.tls.servername).to.equal('kubernetes.default');
      expect(await config.authHeaders()).to.deep.equal({ authorization: 'Bearer abc' });
      expect(config.namespace).to.equal('web');
    });

    it('relative file names are read from the kubeconfig directory (ResolveLocalPaths)', async () => {
      const conf = join(dir, 'conf');
      await mkdir(conf);
      await writeFile(join(conf, 'ca.pem'), CA);
      await writeFile(join(conf, 'client.pem'), 'CERT');
      await writeFile(join(conf, 'client.key'), 'KEY');
      await writeFile(join(conf, 'token'), 'from-file\n');
      const file = join(conf, 'kubeconfig');
      await writeFile(
        file,
        kubeconfig(
          { server: 'https://api.example:6443', 'certificate-authority': 'ca.pem' },
          { 'client-certificate': 'client.pem', 'client-key': 'client.key', token: 'inline', tokenFile: 'token' },
        ),
      );
      const config = await loadClusterConfig(file, environment({}));
      expect(config.tls.ca?.toString()).to.equal(CA);
      expect(config.tls.cert?.toString()).to.equal('CERT');
      expect(config.tls.key?.toString()).to.equal('KEY');
      // BearerTokenFile: the file's last successful read wins over the inline token.
      expect(await config.authHeaders()).to.deep.equal({ authorization: 'Bearer from-file' });
    });

    it('a missing certificate file names the kubeconfig and the file', async () => {
      const file = join(dir, 'kubeconfig');
      await writeFile(file, kubeconfig({ server: 'https://x', 'certificate-authority': 'nowhere.pem' }, {}));
      const error = await rejection(loadClusterConfig(file, environment({})));
      expect(error.message).to.equal(
        `kubeconfig ${file}: cannot read certificate-authority ${join(dir, 'nowhere.pem')}: ENOENT: no such file or directory, open '${join(dir, 'nowhere.pem')}'`,
      );
    });

    it('a kubeconfig without a current context has no current cluster', async () => {
      const file = join(dir, 'kubeconfig');
      await writeFile(file, dump({ apiVersion: 'v1', kind: 'Config', clusters: [] }));
      expect((await rejection(loadClusterConfig(file, environment({})))).message).to.equal(
        `kubeconfig ${file} has no current cluster`,
      );
    });

    it('$KUBECONFIG with one file, then ~/.kube/config, then a clear error', async () => {
      const file = join(dir, 'one');
      await writeFile(file, kubeconfig({ server: 'https://one:6443' }, { token: 't' }));
      expect((await loadClusterConfig(undefined, environment({ KUBECONFIG: file }))).server).to.equal(
        'https://one:6443',
      );
      const error = await rejection(loadClusterConfig(undefined, environment({})));
      expect(error.message).to.equal(
        'no Kubernetes configuration found: pass --kubeconfig, set $KUBECONFIG, or run in a pod',
      );
      await mkdir(join(dir, 'home', '.kube'), { recursive: true });
      await writeFile(join(dir, 'home', '.kube', 'config'), kubeconfig({ server: 'https://home:6443' }, {}));
      expect((await loadClusterConfig(undefined, environment({}))).server).to.equal('https://home:6443');
    });
  });
});

function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown>, namespace?: string): string {
  return dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', ...(namespace && { namespace }) } }],
    'current-context': 'ctx',
  });
}
