import { DEFAULT_NAMESPACE } from '../api/index.ts';
import { packageFile } from '../cli/package-root.ts';
import type { ControlPlane } from './controlplane.ts';
import { installGatewayApiCrds, TraefikGateway, traefikGatewayObjects } from './gateway.ts';
import { PodNetwork } from './pod-network.ts';
import { getOnce } from './real-node.ts';

/** Where `staticsite local --gateway` serves the sites, on 127.0.0.1. */
export const LOCAL_GATEWAY_PORT = 8000;
/** The Gateway the controller's routes attach to (`--gateway`). */
export const LOCAL_GATEWAY = { namespace: DEFAULT_NAMESPACE, name: 'public' } as const;

/** The curl that asks the local gateway for `host`, as its DNS name would reach it. */
export function gatewayCurl(host: string, port = LOCAL_GATEWAY_PORT): string {
  return `curl --resolve ${host}:${port}:127.0.0.1 http://${host}:${port}/`;
}

/**
 * `staticsite local --gateway`: Gateway API's CRDs, Traefik as a host process on 127.0.0.1 with a
 * GatewayClass and a Gateway of its own, and the pod network that lets Traefik reach the node
 * simulator's pods (devenv/pod-network.ts). The controller's routes then take each site's hostname
 * through Traefik's routing to the pods of its Service's EndpointSlices.
 */
export class LocalGateway {
  private traefik: TraefikGateway | undefined;
  private network: PodNetwork | undefined;
  readonly port = LOCAL_GATEWAY_PORT;

  /** Installs the CRDs, starts the pod network and Traefik, and waits until the Gateway is Programmed. */
  async start(cp: ControlPlane): Promise<void> {
    await installGatewayApiCrds(cp);
    this.network = await new PodNetwork(cp.admin).start();
    this.traefik = await TraefikGateway.start({
      kubeconfig: cp.kubeconfigPath,
      statusAddress: '127.0.0.1',
      listenAddress: '127.0.0.1',
      httpPort: this.port,
      backendProxy: this.network.url,
    });
    const applied = await cp.kubectl(
      ['apply', '-f', '-'],
      traefikGatewayObjects({ ...LOCAL_GATEWAY, port: this.port }),
    );
    if (applied.code !== 0) throw new Error(`the GatewayClass and Gateway: ${applied.stderr}`);
    const { namespace, name } = LOCAL_GATEWAY;
    const programmed = await cp.kubectl([
      '-n',
      namespace,
      'wait',
      '--for=condition=Programmed',
      `gateway/${name}`,
      '--timeout=60s',
    ]);
    if (programmed.code !== 0) {
      throw new Error(
        `Gateway ${namespace}/${name} not Programmed: ${programmed.stderr}\n${await this.traefik.tail()}`,
      );
    }
    const rbac = packageFile('manifests', 'overlays', 'gateway', 'controller-routes-rbac.yaml');
    const granted = await cp.kubectl(['apply', '-f', rbac]);
    if (granted.code !== 0) throw new Error(`the controller's route RBAC: ${granted.stderr}`);
    // Its garbage collector maps the kinds of owners and dependents from discovery, which it re-reads
    // every 30 s; until then it backs off on the children of a deleted site (StaticSite and HTTPRoute
    // came after it started), and a site deleted in the first minute kept being served for ~40 s.
    await cp.restart('kube-controller-manager');
  }

  /** GET / for `host` through the gateway, as gatewayCurl(host) asks it. */
  get(host: string): Promise<{ status: number; body: string }> {
    return getOnce(`http://127.0.0.1:${this.port}/`, 2_000, `${host}:${this.port}`);
  }

  get logPath(): string | undefined {
    return this.traefik?.logPath;
  }

  async stop(): Promise<void> {
    await this.traefik?.stop();
    await this.network?.stop();
  }
}
