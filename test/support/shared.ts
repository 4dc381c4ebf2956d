import { ControlPlane } from '../../devenv/controlplane.ts';
import { NodeSimulator } from '../../devenv/node-simulator.ts';

export interface TestCluster {
  controlPlane: ControlPlane;
  nodes: NodeSimulator;
}

let starting: Promise<TestCluster> | undefined;

/**
 * The one control plane of a test run: started by the first end-to-end suite that asks for it,
 * stopped by the root hook after the last test (see root-hooks.ts).
 */
export function testCluster(): Promise<TestCluster> {
  starting ??= (async () => {
    const controlPlane = await new ControlPlane().start();
    const nodes = new NodeSimulator(controlPlane.admin);
    try {
      await nodes.start();
    } catch (error) {
      await controlPlane.stop();
      throw error;
    }
    return { controlPlane, nodes };
  })();
  return starting;
}

export async function stopTestCluster(): Promise<void> {
  if (!starting) return;
  const cluster = await starting.catch(() => undefined);
  starting = undefined;
  if (!cluster) return;
  await cluster.nodes.stop();
  await cluster.controlPlane.stop();
}
