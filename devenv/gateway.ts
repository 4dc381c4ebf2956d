/**
 * A real Gateway API implementation for the tests and `npm run local`: Traefik, built from its Go
 * module by devenv/gateway/build.sh, run as a host process with its Kubernetes Gateway provider
 * against the control plane. It takes the Gateways of its GatewayClass, routes their HTTPRoutes to
 * the backends' EndpointSlices (pod IPs, which the host reaches on a real node) and writes route and
 * Gateway status, the Gateway's `status.addresses` included.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { packageFile } from '../cli/package-root.ts';
import { type ControlPlane, waitFor } from './controlplane.ts';
import { ManagedProcess, startOrUndo } from './managed-process.ts';
import { freePort } from './ports.ts';
import { thirdPartyModuleDir } from './third-party-crds.ts';

const run = promisify(execFile);

/** The controllerName a GatewayClass names for Traefik to take its Gateways. */
export const TRAEFIK_CONTROLLER_NAME = 'traefik.io/gateway-controller';
/** The `spec.controller` of an IngressClass whose Ingresses Traefik's Ingress provider serves. */
export const TRAEFIK_INGRESS_CONTROLLER = 'traefik.io/ingress-controller';

/** Builds (or finds in the cache) the Traefik binary; returns its path. */
export async function traefikBinary(): Promise<string> {
  const { stdout } = await run('bash', [packageFile('devenv', 'gateway', 'build.sh')], {
    maxBuffer: 1 << 20,
    timeout: 60 * 60 * 1000,
  });
  return stdout.trim().split('\n').at(-1) ?? '';
}

export interface TraefikOptions {
  /** A kubeconfig Traefik's provider reads the Gateway API objects, Services and EndpointSlices with. */
  kubeconfig: string;
  /** The address Traefik reports in each Gateway's `status.addresses` (where its listeners answer). */
  statusAddress: string;
  /** The port of the HTTP entry point; a Gateway listener must name this port to be served. Default: a free one. */
  httpPort?: number;
  /**
   * Also serve Ingresses (Traefik's Kubernetes Ingress provider): those of an IngressClass whose
   * controller is TRAEFIK_INGRESS_CONTROLLER, on every entry point, reporting `statusAddress` in their
   * status.loadBalancer.
   */
  ingress?: boolean;
  /** The address the HTTP entry point listens on. Default: every address. */
  listenAddress?: string;
  /**
   * The proxy Traefik reaches its backends through (HTTP_PROXY, e.g. `socks5://127.0.0.1:PORT`): the
   * network of simulated pods (devenv/pod-network.ts). Default: none, backends are reached directly.
   */
  backendProxy?: string;
  binary?: string;
}

export class TraefikGateway {
  httpPort = 0;
  private pingPort = 0;
  private dir = '';
  private process: ManagedProcess | undefined;
  private readonly options: TraefikOptions;

  private constructor(options: TraefikOptions) {
    this.options = options;
  }

  static async start(options: TraefikOptions): Promise<TraefikGateway> {
    const gateway = new TraefikGateway(options);
    await startOrUndo(
      () => gateway.launch(),
      () => gateway.stop(),
    );
    return gateway;
  }

  get logPath(): string {
    return join(this.dir, 'traefik.log');
  }

  private async launch(): Promise<void> {
    const binary = this.options.binary ?? (await traefikBinary());
    this.dir = await mkdtemp(join(tmpdir(), 'staticsite-traefik-'));
    this.httpPort = this.options.httpPort ?? (await freePort());
    this.pingPort = await freePort();
    const args = [
      `--entryPoints.web.address=${this.options.listenAddress ?? ''}:${this.httpPort}`,
      `--entryPoints.ping.address=127.0.0.1:${this.pingPort}`,
      '--ping=true',
      '--ping.entryPoint=ping',
      '--providers.kubernetesgateway=true',
      `--providers.kubernetesgateway.statusAddress.ip=${this.options.statusAddress}`,
      '--providers.kubernetesgateway.throttleDuration=0s',
      ...(this.options.ingress
        ? [
            '--providers.kubernetesingress=true',
            `--providers.kubernetesingress.ingressEndpoint.ip=${this.options.statusAddress}`,
            '--providers.kubernetesingress.throttleDuration=0s',
          ]
        : []),
      '--log.level=INFO',
      '--accesslog=true',
    ];
    // The provider reads KUBECONFIG when it runs outside a cluster.
    const env: NodeJS.ProcessEnv = { ...process.env, KUBECONFIG: this.options.kubeconfig };
    if (this.options.backendProxy) {
      // Go reads the upper-case names first; NO_PROXY empty so that no pod address bypasses the proxy.
      Object.assign(env, { HTTP_PROXY: this.options.backendProxy, NO_PROXY: '', no_proxy: '' });
    }
    this.process = new ManagedProcess('traefik', { command: binary, args, logPath: this.logPath, env });
    const proc = this.process;
    await waitFor(
      'traefik /ping',
      30_000,
      async () => (await fetch(`http://127.0.0.1:${this.pingPort}/ping`)).status === 200,
      proc,
    );
  }

  async stop(): Promise<void> {
    await this.process?.stop();
    this.process = undefined;
    if (this.dir && !process.env.KEEP_TRAEFIK_LOGS) await rm(this.dir, { recursive: true, force: true });
  }

  async tail(lines = 40): Promise<string> {
    return (await this.process?.tail(lines)) ?? '';
  }
}

/**
 * Gateway API's standard channel CRDs (the folder also holds an admission policy, left out), applied
 * server-side (they exceed the client-side apply annotation's size), and waits until they are Established.
 */
export async function installGatewayApiCrds(cp: ControlPlane): Promise<void> {
  const standard = join(await thirdPartyModuleDir('gateway-api'), 'config', 'crd', 'standard');
  for (const file of (await readdir(standard)).filter((f) => f.endsWith('.yaml') && !f.includes('_vap_'))) {
    const applied = await cp.kubectl(['apply', '--server-side', '-f', join(standard, file)]);
    if (applied.code !== 0) throw new Error(`kubectl apply --server-side -f ${file}: ${applied.stderr}`);
  }
  const established = await cp.kubectl(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);
  if (established.code !== 0) throw new Error(`Gateway API CRDs not Established: ${established.stderr}`);
}

/**
 * Traefik's GatewayClass `traefik` and a Gateway of it with one HTTP listener, on `port` (Traefik's
 * entry point), for routes of every namespace, for `hostname` (a wildcard) or any.
 */
export function traefikGatewayObjects(gateway: { namespace: string; name: string; port: number; hostname?: string }) {
  const hostname = gateway.hostname ? `, hostname: "${gateway.hostname}"` : '';
  return `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: traefik}
spec: {controllerName: ${TRAEFIK_CONTROLLER_NAME}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${gateway.name}, namespace: ${gateway.namespace}}
spec:
  gatewayClassName: traefik
  listeners:
    - {name: http, protocol: HTTP, port: ${gateway.port}${hostname}, allowedRoutes: {namespaces: {from: All}}}
`;
}
