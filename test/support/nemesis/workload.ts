import { random as seededRandom } from '../../../devenv/fuzz/mutations.ts';
import type { KubeHttp } from '../../../devenv/kube-http.ts';

export type OperationKind = 'create' | 'edit' | 'delete';

/** One operation of the workload, with the API server's answer (status 0: no answer at all). */
export interface Operation {
  kind: OperationKind;
  name: string;
  at: number;
  status: number;
  /** The Status message of a refusal, or the client's error. */
  message?: string;
}

export interface WorkloadOptions {
  /**
   * A new client for each operation, closed after it: a new connection each time, as each `kubectl`
   * call makes (a kept-alive one may die with a restarted API server, or be closed by its idle
   * timeout just as a request goes out, and fail a request no user would have sent on it).
   */
  connect: () => KubeHttp;
  namespace: string;
  seed: number;
  /** Site names are `<prefix>-<n>`. */
  prefix: string;
  /** Operations a second while running. */
  rate: number;
  /** Shares of creates, edits and deletes (default 2:6:2: as many sites go as come). */
  mix?: Record<OperationKind, number>;
  /** Sites never deleted (so edits always have a target). Default 5. */
  keep?: number;
}

function site(namespace: string, name: string, content: string) {
  return { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', metadata: { name, namespace }, spec: { content } };
}

/**
 * What users do while faults happen: StaticSites created, edited and deleted at a steady pace, in
 * an order fixed by the seed. Every operation and its answer is kept; refusals never stop the run.
 */
export class SiteWorkload {
  readonly operations: Operation[] = [];
  /** `namespace/name` of every site a delete was accepted for. */
  readonly deleted = new Set<string>();
  private readonly options: WorkloadOptions;
  private readonly random: () => number;
  private readonly live: string[] = [];
  private readonly versions = new Map<string, number>();
  private next = 0;
  private running: Promise<void> | undefined;
  private stopping = false;

  constructor(options: WorkloadOptions) {
    this.options = options;
    this.random = seededRandom(options.seed);
  }

  private get sites(): string {
    return `/apis/staticsite.dev/v1/namespaces/${this.options.namespace}/staticsites`;
  }

  /** The sites alive as far as the workload knows: created and not deleted. */
  liveNames(): readonly string[] {
    return this.live;
  }

  /** Creates `count` sites, in order, and fails on a refusal: the set-up before any fault. */
  async seedSites(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const op = await this.create();
      if (op.status !== 201) throw new Error(`create ${op.name}: HTTP ${op.status}: ${op.message}`);
    }
  }

  isRunning(): boolean {
    return this.running !== undefined && !this.stopping;
  }

  start(): void {
    this.stopping = false;
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
    this.running = undefined;
  }

  /** Operations whose answer was neither a success nor `expected` (a refusal the test explains). */
  unexplained(expected: (op: Operation) => boolean = () => false): Operation[] {
    return this.operations.filter((op) => !(op.status >= 200 && op.status < 300) && !expected(op));
  }

  private async loop(): Promise<void> {
    const interval = 1000 / this.options.rate;
    while (!this.stopping) {
      const started = Date.now();
      await this.step();
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, interval - (Date.now() - started))));
    }
  }

  private pick(): OperationKind {
    const mix = this.options.mix ?? { create: 2, edit: 6, delete: 2 };
    const keep = this.options.keep ?? 5;
    const roll = this.random() * (mix.create + mix.edit + mix.delete);
    if (roll < mix.create || this.live.length === 0) return 'create';
    if (roll < mix.create + mix.edit || this.live.length <= keep) return 'edit';
    return 'delete';
  }

  private step(): Promise<Operation> {
    const kind = this.pick();
    if (kind === 'create') return this.create();
    const index = Math.floor(this.random() * this.live.length);
    return kind === 'edit' ? this.edit(this.live[index] as string) : this.remove(index);
  }

  private async attempt(
    kind: OperationKind,
    name: string,
    call: (api: KubeHttp) => ReturnType<KubeHttp['get']>,
  ): Promise<Operation> {
    const op: Operation = { kind, name, at: Date.now(), status: 0 };
    const api = this.options.connect();
    try {
      const res = await call(api);
      op.status = res.status;
      if (res.status >= 300) op.message = (res.body as { message?: string } | undefined)?.message ?? res.text;
    } catch (error) {
      op.message = (error as Error).message;
    } finally {
      api.close();
    }
    this.operations.push(op);
    return op;
  }

  private async create(): Promise<Operation> {
    const name = `${this.options.prefix}-${this.next++}`;
    const op = await this.attempt('create', name, (api) =>
      api.post(this.sites, site(this.options.namespace, name, `<h1>${name} v0</h1>`)),
    );
    if (op.status === 201) {
      this.live.push(name);
      this.versions.set(name, 0);
    }
    return op;
  }

  /** A content edit of the site `name` (`edit(index)` picks one of the live sites). */
  edit(name: string): Promise<Operation> {
    const version = (this.versions.get(name) ?? 0) + 1;
    this.versions.set(name, version);
    return this.attempt('edit', name, (api) =>
      api.patch(`${this.sites}/${name}`, { spec: { content: `<h1>${name} v${version}</h1>` } }),
    );
  }

  private async remove(index: number): Promise<Operation> {
    const name = this.live[index] as string;
    const op = await this.attempt('delete', name, (api) => api.delete(`${this.sites}/${name}`));
    if (op.status === 200 || op.status === 202) {
      this.live.splice(index, 1);
      this.deleted.add(`${this.options.namespace}/${name}`);
    }
    return op;
  }
}
