import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCrd, SHARD_LEASE_PREFIX } from '../../../api/index.ts';
import { LEASE_NAME } from '../../../controller/manager.ts';
import type { ControlPlane } from '../../../devenv/controlplane.ts';
import { installCrd } from '../../../devenv/crds.ts';
import { KubeHttp } from '../../../devenv/kube-http.ts';
import { applyControllerRbac, removeControllerRbac } from '../controller-harness.ts';
import {
  type ConvergenceSample,
  checkHistory,
  type FinalRecord,
  formatViolations,
  type History,
  historyFromProxies,
  leadershipWindows,
  parseApiPath,
  type RecordedRequest,
  type Violation,
} from '../history/index.ts';
import { fileRecords, finalSites, waitConverged } from './cluster-state.ts';
import { Replica, type ReplicaOptions } from './replicas.ts';
import { SiteWorkload } from './workload.ts';

const repoRoot = new URL('../../../', import.meta.url).pathname;

export interface DrillOptions {
  controlPlane: ControlPlane;
  /** Sites live here; the controller's Leases, claims and ServiceAccount in `<namespace>-system`. */
  namespace: string;
  /** --sharded replicas: each holds its own shard Lease; the sharder runs on the election's leader. */
  sharded?: boolean;
  seed: number;
  /** Workload operations a second. */
  rate?: number;
  /**
   * The external records somewhere else than a file store in `recordsDir`: the replicas' flags for
   * it, and how to read every record at the end. Default: `--records-dir`.
   */
  records?: { args: string[]; read: () => Promise<FinalRecord[]> };
}

/**
 * One fault-injection drill on the real control plane: its namespaces and RBAC (the manifests'), the
 * controller replicas behind their recording proxies, a seeded workload of users' edits, and at the
 * end the history checked (test/support/history): no write outside its replica's Lease, no site
 * written by two replicas at once, records consistent, no stuck finalizer, unique hostnames, and
 * convergence within a stated bound after the faults stopped.
 */
export class Drill {
  readonly namespace: string;
  readonly system: string;
  readonly replicas = new Map<string, Replica>();
  readonly convergence: ConvergenceSample[] = [];
  workload!: SiteWorkload;
  recordsDir = '';
  logDir = '';
  /** Spans during which the test broke something users depend on: their writes may fail then. */
  readonly outages: Array<{ label: string; from: number; to: number }> = [];
  /** Replicas restarted after they exited, as a kubelet restarts a pod: identity and time. */
  readonly restarts: Array<{ identity: string; at: number }> = [];
  private readonly options: DrillOptions;
  private supervising: Promise<void> | undefined;
  private tearingDown = false;

  constructor(options: DrillOptions) {
    this.options = options;
    this.namespace = options.namespace;
    this.system = `${options.namespace}-system`;
  }

  get cp(): ControlPlane {
    return this.options.controlPlane;
  }

  async setUp(): Promise<void> {
    const cp = this.cp;
    await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
    await cp.ensureNamespace(this.namespace);
    await applyControllerRbac(cp, this.system);
    if (this.options.sharded) {
      const text = await readFile(join(repoRoot, 'manifests/overlays/sharded/shard-leases-rbac.yaml'), 'utf8');
      const applied = await cp.kubectl(
        ['apply', '-f', '-'],
        text.replaceAll('namespace: staticsite-system', `namespace: ${this.system}`),
      );
      if (applied.code !== 0) throw new Error(`kubectl apply shard-leases-rbac.yaml: ${applied.stderr}`);
    }
    this.recordsDir = await mkdtemp(join(tmpdir(), `${this.namespace}-records-`));
    this.logDir = await mkdtemp(join(tmpdir(), `${this.namespace}-logs-`));
    this.workload = new SiteWorkload({
      connect: () => new KubeHttp(cp.adminCredentials),
      namespace: this.namespace,
      seed: this.options.seed,
      prefix: 'site',
      rate: this.options.rate ?? 3,
    });
  }

  async startReplica(identity: string, extra: Partial<Pick<ReplicaOptions, 'args' | 'via'>> = {}): Promise<Replica> {
    const replica = await Replica.start({
      controlPlane: this.cp,
      identity,
      namespace: this.namespace,
      system: this.system,
      recordArgs: this.options.records?.args ?? ['--records-dir', this.recordsDir],
      logDir: this.logDir,
      args: [
        '--workers=4',
        '--kube-api-qps=0',
        ...(this.options.sharded ? ['--sharded', '--shard-name', identity] : []),
        ...(extra.args ?? []),
      ],
      ...(extra.via && { via: extra.via }),
    });
    this.replicas.set(identity, replica);
    await replica.waitReady();
    return replica;
  }

  /**
   * Restarts every replica that exits (leadership lost, a crash) after `backoffMs`, as a kubelet
   * restarts a pod's container, until tearDown.
   */
  supervise(backoffMs = 500): void {
    this.supervising ??= (async () => {
      while (!this.tearingDown) {
        for (const replica of this.replicas.values()) {
          if (replica.running || this.tearingDown) continue;
          await new Promise((resolve) => setTimeout(resolve, backoffMs));
          if (this.tearingDown) break;
          try {
            await replica.restart();
            this.restarts.push({ identity: replica.identity, at: Date.now() });
          } catch (error) {
            // The API server may still be down: the next round tries again.
            process.stderr.write(`nemesis: restarting ${replica.identity} failed: ${(error as Error).message}\n`);
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
  }

  /**
   * Runs `fault` (which breaks and heals something users depend on) and records its span, plus
   * `graceMs` for clients to reconnect, as an outage: the users' writes that fail within it are
   * explained by it.
   */
  async outage<T>(label: string, fault: () => Promise<T>, graceMs = 5_000): Promise<T> {
    const from = Date.now();
    try {
      return await fault();
    } finally {
      this.outages.push({ label, from, to: Date.now() + graceMs });
    }
  }

  /**
   * Users' writes that failed for another reason than being unable to reach the API (no answer, or
   * a 5xx), or outside every outage. An outage lasts for the users until their first success after
   * it began: a keep-alive connection that died with the API server fails the first request sent on
   * it, whenever that is.
   */
  unexplainedOperations() {
    const ops = this.workload.operations;
    const succeeded = (op: (typeof ops)[number]) => op.status >= 200 && op.status < 300;
    const firstSuccessAfter = (at: number) => ops.find((op) => op.at >= at && succeeded(op))?.at ?? Infinity;
    const spans = this.outages.map((o) => ({ from: o.from, to: Math.max(o.to, firstSuccessAfter(o.from)) }));
    return this.workload.unexplained(
      (op) => (op.status === 0 || op.status >= 500) && spans.some((o) => op.at >= o.from && op.at <= o.to),
    );
  }

  /** The holder of the election Lease (or a shard's), as the API server has it. */
  async holder(lease = LEASE_NAME): Promise<string | undefined> {
    const res = await this.cp.admin.get<{ spec?: { holderIdentity?: string } }>(
      `/apis/coordination.k8s.io/v1/namespaces/${this.system}/leases/${lease}`,
    );
    return res.status === 200 ? res.body.spec?.holderIdentity || undefined : undefined;
  }

  /**
   * Waits for convergence after a fault stopped at `stoppedAt`, and keeps the sample for the
   * checker. The users' edits pause meanwhile (each edit starts a rollout, so under a steady stream
   * of them no moment has every site Ready) and resume afterwards if they were running.
   */
  async converge(label: string, stoppedAt: number, timeoutMs = 120_000): Promise<void> {
    const editing = this.workload.isRunning();
    if (editing) await this.workload.stop();
    const result = await waitConverged(this.cp.admin, this.namespace, timeoutMs);
    if (editing) this.workload.start();
    if ('at' in result) {
      this.convergence.push({ label, faultsStoppedAt: stoppedAt, convergedAt: result.at });
    } else {
      const shown = result.pending.slice(0, 5).join('; ');
      const more = result.pending.length > 5 ? ` and ${result.pending.length - 5} more` : '';
      this.convergence.push({ label: `${label} (pending: ${shown}${more})`, faultsStoppedAt: stoppedAt });
    }
  }

  /** The recorded requests of every replica, the final state and the convergence samples. */
  async history(): Promise<History> {
    const proxies = new Map([...this.replicas].map(([identity, r]) => [identity, r.proxy]));
    return {
      ...historyFromProxies(proxies),
      final: {
        sites: await finalSites(this.cp.admin, this.namespace),
        records: await (this.options.records?.read() ?? fileRecords(this.recordsDir)),
        deletedSites: [...this.workload.deleted],
      },
      convergence: this.convergence,
    };
  }

  /** Every rule of the checker over the history; the bound is for convergence after each fault. */
  async violations(
    convergenceBoundMs: number,
    options: { lateEvents?: boolean } = {},
  ): Promise<{ history: History; violations: Violation[] }> {
    const history = await this.history();
    const lease = (identity: string) => (this.options.sharded ? `${SHARD_LEASE_PREFIX}${identity}` : LEASE_NAME);
    // `lateEvents`: the network drills cut and heal connections, and an Event sent before the
    // deadline has reached the API server seconds after the lease expired; Events are history, not
    // state, and there the checker cannot tell such an Event from one sent late. State writes stay judged.
    const leaseFor = (identity: string, request: RecordedRequest) =>
      options.lateEvents && parseApiPath(request.path)?.resource === 'events' ? undefined : lease(identity);
    // A site's writes by one replica are spans between changes of leadership: a replica that leads
    // again after another did (a restart, a partition healed) starts a new span.
    const leases = new Set([LEASE_NAME, ...[...this.replicas.keys()].map(lease)]);
    const boundaries = [...leases].flatMap((lease) =>
      leadershipWindows(history, lease, this.system).flatMap((w) => [w.from, w.until]),
    );
    const violations = checkHistory(history, {
      leadership: { leaseNamespace: this.system, leaseFor },
      siteWrites: { boundaries: boundaries.filter(Number.isFinite) },
      convergenceBoundMs,
    });
    return { history, violations };
  }

  static report(violations: Violation[]): string {
    return violations.length === 0 ? '' : `\n${formatViolations(violations)}`;
  }

  async tearDown(): Promise<void> {
    const cp = this.cp;
    this.tearingDown = true;
    await this.supervising;
    await this.workload?.stop();
    for (const replica of this.replicas.values()) await replica.stop();
    const sites = `/apis/staticsite.dev/v1/namespaces/${this.namespace}/staticsites`;
    const left = await cp.admin.get<{ items: Array<{ metadata: { name: string } }> }>(sites);
    for (const s of left.body?.items ?? []) {
      await cp.admin.patch(`${sites}/${s.metadata.name}`, { metadata: { finalizers: null } });
    }
    await cp.admin.delete(`/api/v1/namespaces/${this.namespace}`);
    await removeControllerRbac(cp, this.system);
    await cp.admin.delete(`/api/v1/namespaces/${this.system}`);
    await rm(this.recordsDir, { recursive: true, force: true });
    if (process.env.KEEP_CONTROLLER_LOGS) process.stderr.write(`nemesis logs: ${this.logDir}\n`);
    else await rm(this.logDir, { recursive: true, force: true });
  }
}
