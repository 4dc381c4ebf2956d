// Importing this module loads @kubernetes/client-node (about 85 MB, over a second): cluster-config.ts
// imports it only for the kubeconfigs it does not read itself.
import type { RequestOptions as HttpsRequestOptions } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../clock/clock.ts';
import type { ClusterConfig } from './cluster.ts';

/** How long client-node's headers are reused before it is asked again (exec plugins, token files). */
const AUTH_REFRESH_MS = 30_000;

/** A kubeconfig file, or client-node's default search ($KUBECONFIG, merged; ~/.kube/config), through client-node. */
export async function clientNodeClusterConfig(file: string | undefined, clock: Clock): Promise<ClusterConfig> {
  const kc = new KubeConfig();
  if (file) kc.loadFromFile(file);
  else kc.loadFromDefault();
  const cluster = kc.getCurrentCluster();
  if (!cluster)
    throw new Error(file ? `kubeconfig ${file} has no current cluster` : 'kubeconfig has no current cluster');
  const tls: HttpsRequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  let headers: Record<string, string> = {};
  let headersAt = Number.NEGATIVE_INFINITY;
  const authHeaders = async () => {
    const now = clock.now();
    if (now - headersAt < AUTH_REFRESH_MS) return headers;
    const opts: HttpsRequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    const fresh: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) fresh[k] = String(v);
    if (opts.auth) fresh.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    headers = fresh;
    headersAt = now;
    return headers;
  };
  await authHeaders();
  return {
    server: cluster.server,
    // The TLS fields of the options client-node filled in (the transport reads only those).
    tls,
    authHeaders,
    namespace: kc.getContextObject(kc.getCurrentContext())?.namespace,
    source: file ? `kubeconfig ${file}` : 'kubeconfig ($KUBECONFIG)',
  };
}
