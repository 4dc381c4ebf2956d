/**
 * How long the control plane takes to start with cached binaries: etcd, kube-apiserver /readyz,
 * kube-controller-manager spawned, node simulator registered. Run: npm run bench:controlplane
 */
import { ControlPlane, controlPlaneBinDir } from '../devenv/controlplane.ts';
import { NodeSimulator } from '../devenv/node-simulator.ts';

const runs = Number(process.argv[2] ?? 5);
const binDir = await controlPlaneBinDir();
const times: number[] = [];
for (let i = 0; i < runs; i++) {
  const started = performance.now();
  const cp = await new ControlPlane({ binDir }).start();
  const nodes = new NodeSimulator(cp.admin);
  await nodes.start();
  times.push(performance.now() - started);
  await nodes.stop();
  await cp.stop();
}
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)] ?? 0;
console.log(
  JSON.stringify({
    runs,
    medianSeconds: +(median / 1000).toFixed(2),
    minSeconds: +((times[0] ?? 0) / 1000).toFixed(2),
    maxSeconds: +((times[times.length - 1] ?? 0) / 1000).toFixed(2),
  }),
);
