import { ControlPlane } from './controlplane.ts';
import { NodeSimulator } from './node-simulator.ts';

/** `npm run cluster`: a control plane (with the node simulator) in the foreground until Ctrl-C. */
const started = Date.now();
process.stderr.write('starting etcd, kube-apiserver, kube-controller-manager and the node simulator...\n');
const controlPlane = await new ControlPlane().start();
const nodes = new NodeSimulator(controlPlane.admin);
await nodes.start();
process.stdout.write(
  [
    `control plane ready in ${((Date.now() - started) / 1000).toFixed(1)} s (API server ${controlPlane.apiServerUrl})`,
    `kubeconfig: ${controlPlane.kubeconfigPath}`,
    `kubectl:    ${controlPlane.binDir}/kubectl`,
    `logs:       ${controlPlane.dir}/*.log`,
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
  process.stderr.write(`\n${signal}: stopping the control plane...\n`);
  await nodes.stop();
  await controlPlane.stop();
  process.stderr.write('stopped.\n');
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
