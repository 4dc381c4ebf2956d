import { KubeApi } from './api-client.ts';
import { loadClusterConfig } from './cluster-config.ts';
import { HttpsTransport, type HttpsTransportOptions } from './transport.ts';

/**
 * A KubeApi over HTTPS to the cluster of `kubeconfig` or, without one, the in-cluster service
 * account or the default kubeconfig search (cluster-config.ts).
 */
export async function connectKubeApi(kubeconfig: string | undefined, options: HttpsTransportOptions): Promise<KubeApi> {
  const config = await loadClusterConfig(kubeconfig, { clock: options.clock });
  return new KubeApi(await HttpsTransport.connect(config, options));
}
