import type { RequestOptions as HttpsRequestOptions } from 'node:https';

/** TLS material for the API server's connections, as node:https takes it. */
export type TlsOptions = Pick<
  HttpsRequestOptions,
  'ca' | 'cert' | 'key' | 'pfx' | 'passphrase' | 'servername' | 'rejectUnauthorized'
>;

/**
 * Where and how to reach the API server: what client-go calls a rest.Config, reduced to what our
 * transport needs. Built here, without @kubernetes/client-node, for the in-cluster service account
 * and for kubeconfig files with certificates and tokens; client-node (loaded only then: importing
 * it costs about 85 MB and over a second) handles kubeconfigs with exec plugins, auth providers,
 * basic auth, impersonation or a proxy, and the merging of several $KUBECONFIG files.
 * docs/kube-credentials.md has the rules and their sources in client-go.
 */
export interface ClusterConfig {
  /** `https://host:port`. */
  server: string;
  tls: TlsOptions;
  /** The headers that authenticate the next request (a token file is read again once a minute). */
  authHeaders(): Promise<Record<string, string>>;
  /** The pod's namespace in a cluster, or the kubeconfig context's namespace. */
  namespace?: string;
  /** What the configuration came from, for messages: a kubeconfig path or the service account. */
  source: string;
}
