import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { loadAll } from 'js-yaml';
import type { Clock } from '../clock/clock.ts';
import type { ClusterConfig, TlsOptions } from './cluster.ts';

/** What loading may consult; tests point these at their own files. */
export interface ClusterConfigEnvironment {
  clock: Clock;
  env?: Record<string, string | undefined>;
  /** The pod's service-account mount (client-go's fixed path). */
  serviceAccountDir?: string;
  homeDir?: string;
  /** How often a token file is read again: client-go's cached file token source, a minute less 10 s of leeway. */
  tokenFileRefreshMs?: number;
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** client-go's rest.ErrNotInCluster. */
export const NOT_IN_CLUSTER =
  'unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined';

export class ClusterConfigError extends Error {
  override name = 'ClusterConfigError';
}

/**
 * The cluster to talk to, in client-node's order (which our processes always followed): the
 * kubeconfig file when given, otherwise the in-cluster service account when
 * KUBERNETES_SERVICE_HOST is set, otherwise $KUBECONFIG, otherwise ~/.kube/config.
 */
export async function loadClusterConfig(
  kubeconfig: string | undefined,
  environment: ClusterConfigEnvironment,
): Promise<ClusterConfig> {
  const env = environment.env ?? process.env;
  if (kubeconfig) return fromKubeconfigFile(kubeconfig, environment);
  if (env.KUBERNETES_SERVICE_HOST) return inCluster(environment);
  const listed = (env.KUBECONFIG ?? '').split(delimiter).filter((path) => path !== '');
  if (listed.length > 1) return viaClientNode(undefined, environment);
  const path = listed[0] ?? join(environment.homeDir ?? homedir(), '.kube', 'config');
  if (!existsSync(path)) {
    throw new ClusterConfigError(
      'no Kubernetes configuration found: pass --kubeconfig, set $KUBECONFIG, or run in a pod',
    );
  }
  return fromKubeconfigFile(path, environment);
}

/** client-go's rest.InClusterConfig, and the namespace as clientcmd's in-cluster config reads it. */
function inCluster(environment: ClusterConfigEnvironment): ClusterConfig {
  const env = environment.env ?? process.env;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new ClusterConfigError(NOT_IN_CLUSTER);
  const dir = environment.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const tokenFile = join(dir, 'token');
  // client-go fails when the token cannot be read, and goes on without the CA when it cannot.
  const token = tokenFileHeaders(tokenFile, undefined, environment);
  const ca = readOptional(join(dir, 'ca.crt'));
  const namespaceFile = readOptional(join(dir, 'namespace'))?.toString('utf8').trim();
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    tls: ca === undefined ? {} : { ca },
    authHeaders: token,
    namespace: env.POD_NAMESPACE || namespaceFile || 'default',
    source: `the in-cluster service account (${dir})`,
  };
}

interface KubeconfigFile {
  'current-context'?: string;
  contexts?: { name: string; context?: { cluster?: string; user?: string; namespace?: string } }[];
  clusters?: { name: string; cluster?: Record<string, unknown> }[];
  users?: { name: string; user?: Record<string, unknown> }[];
}

/** Settings of a user or cluster that only client-node implements here. */
const CLIENT_NODE_USER_KEYS = [
  'exec',
  'auth-provider',
  'username',
  'password',
  'as',
  'as-groups',
  'as-uid',
  'as-user-extra',
];
const CLIENT_NODE_CLUSTER_KEYS = ['proxy-url'];

async function fromKubeconfigFile(path: string, environment: ClusterConfigEnvironment): Promise<ClusterConfig> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ClusterConfigError(`cannot read kubeconfig ${path}: ${(error as Error).message}`);
  }
  let file: KubeconfigFile;
  try {
    // An empty file (or one of comments) is an empty kubeconfig; more than one document is not one.
    const documents = loadAll(text);
    if (documents.length > 1) throw new Error('expected a single document in the stream, but found more');
    file = (documents[0] ?? {}) as KubeconfigFile;
  } catch (error) {
    throw new ClusterConfigError(`kubeconfig ${path} is not valid YAML: ${(error as Error).message}`);
  }
  const contextName = file['current-context'];
  const context = file.contexts?.find((c) => c.name === contextName)?.context;
  const cluster = file.clusters?.find((c) => c.name === context?.cluster)?.cluster;
  if (!context || !cluster || typeof cluster.server !== 'string') {
    throw new ClusterConfigError(`kubeconfig ${path} has no current cluster`);
  }
  const user = file.users?.find((u) => u.name === context.user)?.user ?? {};
  if (CLIENT_NODE_USER_KEYS.some((k) => k in user) || CLIENT_NODE_CLUSTER_KEYS.some((k) => k in cluster)) {
    return viaClientNode(path, environment);
  }
  // clientcmd resolves relative file names against the kubeconfig's directory.
  const base = dirname(path);
  const pem = (data: unknown, file: unknown, what: string): Buffer | undefined => {
    if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64');
    if (typeof file !== 'string' || file === '') return undefined;
    const resolved = isAbsolute(file) ? file : join(base, file);
    try {
      return readFileSync(resolved);
    } catch (error) {
      throw new ClusterConfigError(`kubeconfig ${path}: cannot read ${what} ${resolved}: ${(error as Error).message}`);
    }
  };
  const tls: TlsOptions = {};
  const ca = pem(cluster['certificate-authority-data'], cluster['certificate-authority'], 'certificate-authority');
  if (ca) tls.ca = ca;
  const cert = pem(user['client-certificate-data'], user['client-certificate'], 'client-certificate');
  if (cert) tls.cert = cert;
  const key = pem(user['client-key-data'], user['client-key'], 'client-key');
  if (key) tls.key = key;
  if (cluster['insecure-skip-tls-verify'] === true) tls.rejectUnauthorized = false;
  if (typeof cluster['tls-server-name'] === 'string' && cluster['tls-server-name'] !== '') {
    tls.servername = cluster['tls-server-name'];
  }
  const token = typeof user.token === 'string' && user.token !== '' ? user.token : undefined;
  const tokenFile = typeof user.tokenFile === 'string' && user.tokenFile !== '' ? user.tokenFile : undefined;
  const fixed: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  return {
    server: cluster.server,
    tls,
    // A token file's last successful read wins over `token` (rest.Config.BearerTokenFile).
    authHeaders:
      tokenFile === undefined
        ? async () => fixed
        : tokenFileHeaders(isAbsolute(tokenFile) ? tokenFile : join(base, tokenFile), token, environment),
    namespace: context.namespace || undefined,
    source: `kubeconfig ${path}`,
  };
}

/**
 * A bearer token read from a file, again once the refresh period has passed (the kubelet rotates a
 * projected service-account token); a failed or empty re-read keeps the last token, as client-go's
 * cached file token source does. The first read must succeed unless a fallback token exists.
 */
function tokenFileHeaders(
  file: string,
  fallback: string | undefined,
  environment: ClusterConfigEnvironment,
): () => Promise<Record<string, string>> {
  const refreshMs = environment.tokenFileRefreshMs ?? 50_000;
  const read = (): string => {
    const text = readFileSync(file, 'utf8').trim();
    if (text === '') throw new Error('read empty token from file');
    return text;
  };
  let token: string;
  try {
    token = read();
  } catch (error) {
    if (fallback === undefined)
      throw new ClusterConfigError(`cannot read token file ${file}: ${(error as Error).message}`);
    token = fallback;
  }
  let readAt = environment.clock.now();
  return async () => {
    const now = environment.clock.now();
    if (now - readAt >= refreshMs) {
      readAt = now;
      try {
        token = read();
      } catch {
        // keep the last token
      }
    }
    return { authorization: `Bearer ${token}` };
  };
}

function readOptional(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** A configuration only client-node can load: its KubeConfig, asked for headers every 30 s. */
async function viaClientNode(file: string | undefined, environment: ClusterConfigEnvironment): Promise<ClusterConfig> {
  const { clientNodeClusterConfig } = await import('./kube-config.ts');
  return clientNodeClusterConfig(file, environment.clock);
}
