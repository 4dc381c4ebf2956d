/**
 * The real node, timed: node start (control plane + containerd, kubelet, kube-proxy, scheduler
 * until the Node is Ready) beside the control plane with the node simulator; `kubectl apply -k
 * manifests` until the three Deployments are available; a StaticSite create until its HTML is
 * served through its Service. Rounds alternate the two node kinds.
 * Run: npm run image && npm run bench:real-node -- [rounds]
 */
import { loadavg } from 'node:os';
import { packageFile } from '../cli/package-root.ts';
import { ControlPlane } from '../devenv/controlplane.ts';
import { eventually } from '../devenv/crds.ts';
import { NodeSimulator } from '../devenv/node-simulator.ts';
import { defaultRouteAddress, getOnce, RealNode, realNodeImages } from '../devenv/real-node.ts';

const rounds = Number(process.argv[2] ?? 2);
const seconds = (since: number) => +((performance.now() - since) / 1000).toFixed(1);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const simulated: number[] = [];
const real: number[] = [];
const rollout: number[] = [];
const served: number[] = [];
const loadBefore = loadavg().map((l) => +l.toFixed(2));

for (let round = 0; round < rounds; round++) {
  let started = performance.now();
  const baseline = await new ControlPlane().start();
  const simulator = new NodeSimulator(baseline.admin);
  await simulator.start();
  simulated.push(seconds(started));
  await simulator.stop();
  await baseline.stop();

  started = performance.now();
  const cp = await new ControlPlane({ nodeAddress: defaultRouteAddress() }).start();
  const node = await RealNode.start({ controlPlane: cp, images: realNodeImages() });
  real.push(seconds(started));
  try {
    started = performance.now();
    const applied = await cp.kubectl(['apply', '-k', packageFile('manifests')]);
    if (applied.code !== 0) throw new Error(applied.stderr);
    const status = await cp.kubectl([
      '-n',
      'staticsite-system',
      'rollout',
      'status',
      'deployment/staticsite-certs',
      'deployment/staticsite-webhook',
      'deployment/staticsite-controller',
      '--timeout=300s',
    ]);
    if (status.code !== 0) throw new Error(status.stderr);
    rollout.push(seconds(started));

    await cp.ensureNamespace('bench');
    started = performance.now();
    const created = await cp.admin.post('/apis/staticsite.dev/v1/namespaces/bench/staticsites', {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name: 'bench' },
      spec: { content: '<h1>bench</h1>', replicas: 2 },
    });
    if (created.status !== 201) throw new Error(created.text);
    const ip = await eventually(
      'the Service',
      async () =>
        (await cp.admin.get<{ spec?: { clusterIP?: string } }>('/api/v1/namespaces/bench/services/bench')).body.spec
          ?.clusterIP,
      60_000,
    );
    await eventually(
      'the HTML served',
      async () => {
        const res = await getOnce(`http://${ip}/`, 1_000).catch(() => undefined);
        return res?.status === 200 && res.body === '<h1>bench</h1>';
      },
      180_000,
      200,
    );
    served.push(seconds(started));
  } finally {
    await node.stop();
    await cp.stop();
  }
}

console.log(
  JSON.stringify(
    {
      rounds,
      loadBefore,
      loadAfter: loadavg().map((l) => +l.toFixed(2)),
      simulatorClusterStartSeconds: simulated,
      realNodeClusterStartSeconds: real,
      realOverSimulator: +(median(real) / median(simulated)).toFixed(2),
      applyToDeploymentsAvailableSeconds: rollout,
      siteCreateToHtmlServedSeconds: served,
    },
    null,
    2,
  ),
);
