import { ControlPlane } from './controlplane.ts';
import { NodeSimulator } from './node-simulator.ts';
import { defaultRouteAddress, RealNode, realNodeImages } from './real-node.ts';

/**
 * `npm run cluster`: a control plane in the foreground until Ctrl-C, with the node simulator, or
 * with `--real-node` a real node (kubelet, kube-proxy, containerd) running the images of
 * `npm run image`.
 */
const realNode = process.argv.includes('--real-node');
const started = Date.now();
process.stderr.write(
  realNode
    ? 'starting etcd, kube-apiserver, kube-controller-manager, then containerd, the kubelet, kube-proxy and kube-scheduler...\n'
    : 'starting etcd, kube-apiserver, kube-controller-manager and the node simulator...\n',
);
const controlPlane = await new ControlPlane(realNode ? { nodeAddress: defaultRouteAddress() } : {}).start();
let stopNodes: () => Promise<void>;
let nodeLines: string[] = [];
try {
  if (realNode) {
    const node = await RealNode.start({ controlPlane, images: realNodeImages() });
    stopNodes = () => node.stop();
    nodeLines = [`node:       ${node.name} (${node.address}), logs in ${node.dir}/*.log`];
  } else {
    const nodes = new NodeSimulator(controlPlane.admin);
    await nodes.start();
    stopNodes = () => nodes.stop();
  }
} catch (error) {
  await controlPlane.stop();
  throw error;
}
process.stdout.write(
  [
    `cluster ready in ${((Date.now() - started) / 1000).toFixed(1)} s (API server ${controlPlane.apiServerUrl})`,
    `kubeconfig: ${controlPlane.kubeconfigPath}`,
    `kubectl:    ${controlPlane.binDir}/kubectl`,
    `logs:       ${controlPlane.dir}/*.log`,
    ...nodeLines,
    '',
    `export KUBECONFIG=${controlPlane.kubeconfigPath} PATH=${controlPlane.binDir}:$PATH`,
    '',
    'Ctrl-C stops everything and removes the temp dir.',
    '',
  ].join('\n'),
);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`\n${signal}: stopping the cluster...\n`);
  await stopNodes();
  await controlPlane.stop();
  process.stderr.write('stopped.\n');
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
