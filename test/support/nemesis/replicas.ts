import type { ControlPlane } from '../../../devenv/controlplane.ts';
import { eventually } from '../../../devenv/crds.ts';
import { builtCli } from '../../../devenv/webhook-process.ts';
import { ApiProxy } from '../controller-api-proxy.ts';
import { ControllerProcess, credentialsVia } from '../controller-harness.ts';

/**
 * The lease timings of the drills: short, so a takeover takes seconds. The 3 s between the renew deadline
 * and the lease duration is the margin the fence keeps for a write on its way (docs/controller.md,
 * "Fencing"); the history checker closes a window at expiry, so a loaded test process needs that much.
 */
export const DRILL_LEASE = { durationS: 6, renewDeadlineS: 3, retryPeriodS: 1 } as const;

export function drillLeaseArgs(): string[] {
  return [
    `--leader-elect-lease-duration=${DRILL_LEASE.durationS}s`,
    `--leader-elect-renew-deadline=${DRILL_LEASE.renewDeadlineS}s`,
    `--leader-elect-retry-period=${DRILL_LEASE.retryPeriodS}s`,
  ];
}

export interface ReplicaOptions {
  controlPlane: ControlPlane;
  identity: string;
  namespace: string;
  /** The controller's own namespace: Leases, claims, its ServiceAccount. */
  system: string;
  /** Where the external records go: `['--records-dir', DIR]`, or the DNS flags. */
  recordArgs: string[];
  logDir: string;
  /** Added to the namespace, records, leader-election and lease-timing flags. */
  args: string[];
  /**
   * Where the replica's connections go instead of straight to its recording proxy: a fault proxy's
   * listen address (`host:port`) that forwards to `proxy.url`'s port. Default: the recording proxy.
   */
  via?: (proxyPort: number) => Promise<string>;
}

/**
 * One `staticsite controller` replica (the built CLI) behind a recording proxy of its own, so every
 * request it makes reaches the history with the time the API server side saw it.
 */
export class Replica {
  readonly identity: string;
  readonly proxy: ApiProxy;
  process: ControllerProcess;
  private readonly options: ReplicaOptions;
  private readonly kubeconfig: string;

  private constructor(options: ReplicaOptions, proxy: ApiProxy, kubeconfig: string, process: ControllerProcess) {
    this.identity = options.identity;
    this.options = options;
    this.proxy = proxy;
    this.kubeconfig = kubeconfig;
    this.process = process;
  }

  static async start(options: ReplicaOptions): Promise<Replica> {
    const { controlPlane: cp, identity, system } = options;
    const proxy = new ApiProxy(cp.apiServerUrl, cp.certificateAuthority);
    await proxy.start();
    const server = options.via ? `https://${await options.via(Number(new URL(proxy.url).port))}` : proxy.url;
    const creds = await cp.serviceAccountCredentials(system, 'staticsite-controller');
    const kubeconfig = await cp.writeKubeconfig(
      `nemesis-${identity}.kubeconfig`,
      credentialsVia(server, creds),
      identity,
    );
    const process = await Replica.spawn(options, kubeconfig);
    return new Replica(options, proxy, kubeconfig, process);
  }

  private static spawn(options: ReplicaOptions, kubeconfig: string): Promise<ControllerProcess> {
    return ControllerProcess.start({
      controlPlane: options.controlPlane,
      identity: options.identity,
      kubeconfig,
      logDir: options.logDir,
      cli: builtCli(),
      args: [
        ...['--namespace', options.namespace, ...options.recordArgs],
        ...['--leader-elect', '--leader-elect-namespace', options.system, '--claims-namespace', options.system],
        ...drillLeaseArgs(),
        ...options.args,
      ],
    });
  }

  get running(): boolean {
    return this.process.process.running;
  }

  /** SIGSTOP: what a long GC pause, a CPU-starved node or a frozen VM does. */
  pause(): void {
    process.kill(this.pid(), 'SIGSTOP');
  }

  resume(): void {
    process.kill(this.pid(), 'SIGCONT');
  }

  /** Starts the replica again after it exited (as a pod's restart does), behind the same proxy. */
  async restart(): Promise<void> {
    if (this.running) throw new Error(`${this.identity} is still running`);
    await this.process.stop();
    this.process = await Replica.spawn(this.options, this.kubeconfig);
  }

  async waitReady(timeoutMs = 60_000): Promise<void> {
    await eventually(`${this.identity} /readyz`, async () => (await this.process.probe('/readyz')) === 200, timeoutMs);
  }

  /** The exit code once the process ends on its own. */
  exited(): Promise<number | null> {
    return this.process.process.exit;
  }

  async stop(): Promise<void> {
    if (this.running) {
      try {
        this.resume();
      } catch {
        // already gone
      }
    }
    await this.process.stop();
    await this.proxy.stop();
  }

  private pid(): number {
    const pid = this.process.process.pid;
    if (pid === undefined) throw new Error(`${this.identity} has no process`);
    return pid;
  }
}
