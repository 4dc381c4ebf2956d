// Importing this module loads @kubernetes/client-node (about 1.7 s): code that may never talk to a
// cluster imports it lazily, as connect.ts does.
import { KubeConfig } from '@kubernetes/client-node';

/**
 * A kubeconfig file when given, otherwise the in-cluster service account (token file re-read by
 * client-node every minute), otherwise client-node's default search ($KUBECONFIG, ~/.kube/config).
 */
export function loadKubeConfig(file?: string): KubeConfig {
  const kc = new KubeConfig();
  if (file) kc.loadFromFile(file);
  else if (process.env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster();
  else kc.loadFromDefault();
  return kc;
}

/** The namespace of the pod this process runs in, when in a cluster. */
export function inClusterNamespace(kc: KubeConfig): string | undefined {
  const context = kc.getContextObject(kc.getCurrentContext());
  return context?.namespace;
}
