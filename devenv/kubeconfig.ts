import { readFile } from 'node:fs/promises';
import { load } from 'js-yaml';
import type { KubeCredentials } from './kube-http.ts';

interface KubeconfigFile {
  'current-context'?: string;
  contexts?: Array<{ name: string; context: { cluster: string; user: string } }>;
  clusters?: Array<{ name: string; cluster: { server: string; 'certificate-authority-data'?: string } }>;
  users?: Array<{
    name: string;
    user: { token?: string; 'client-certificate-data'?: string; 'client-key-data'?: string };
  }>;
}

const b64 = (s: string | undefined) => (s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8'));

/** Reads the current context of a kubeconfig written by kubeconfigYaml (inline data, cert or token). */
export async function readKubeconfig(path: string): Promise<KubeCredentials> {
  const config = load(await readFile(path, 'utf8')) as KubeconfigFile;
  const context = config.contexts?.find((c) => c.name === config['current-context'])?.context;
  const cluster = config.clusters?.find((c) => c.name === context?.cluster)?.cluster;
  const user = config.users?.find((u) => u.name === context?.user)?.user;
  if (!cluster || !user) throw new Error(`${path}: no current context with a cluster and a user`);
  return {
    server: cluster.server,
    caPem: b64(cluster['certificate-authority-data']) ?? '',
    certPem: b64(user['client-certificate-data']),
    keyPem: b64(user['client-key-data']),
    token: user.token,
  };
}
