import { KubeApi } from './api-client.ts';
import { HttpsTransport, type HttpsTransportOptions } from './transport.ts';

/**
 * A KubeApi over HTTPS to the cluster of `kubeconfig` (or, without one, the in-cluster service
 * account or client-node's default search; see kube-config.ts). @kubernetes/client-node is imported
 * on the first call, not with this module: loading it takes about 1.7 s, which a run that never
 * talks to a cluster (the cert bootstrapper writing to a directory) should not pay.
 */
export async function connectKubeApi(kubeconfig: string | undefined, options: HttpsTransportOptions): Promise<KubeApi> {
  const { loadKubeConfig } = await import('./kube-config.ts');
  const kubeConfig = loadKubeConfig(kubeconfig);
  if (!kubeConfig.getCurrentCluster()) {
    throw new Error(
      kubeconfig
        ? `kubeconfig ${kubeconfig} has no current cluster`
        : 'no Kubernetes configuration found: pass --kubeconfig, set $KUBECONFIG, or run in a pod',
    );
  }
  return new KubeApi(await HttpsTransport.create(kubeConfig, options));
}
