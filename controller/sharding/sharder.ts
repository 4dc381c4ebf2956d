import { STATICSITES, type StaticSiteV1 } from '../../api/index.ts';
import { type Clock, sleep } from '../../clock/clock.ts';
import type { KubeApi } from '../../kube/api-client.ts';
import { errorMessage, isConflict, isNotFound } from '../../kube/api-error.ts';
import type { Informer } from '../../kube/informer.ts';
import { type Lease, objectKey } from '../../kube/objects.ts';
import type { ShardMembership } from '../../sharding/shard-membership.ts';
import type { Logger } from '../observability/logger.ts';
import type { ControllerMetrics } from '../observability/metrics.ts';
import { movedSite, type ShardMove, shardMove } from './shard-moves.ts';

export interface SharderDeps {
  api: KubeApi;
  clock: Clock;
  logger: Logger;
  metrics: Pick<ControllerMetrics, 'shardMoves'>;
  /** Every StaticSite, whatever its shard. */
  sites: Informer<StaticSiteV1>;
  /** The shard Leases, feeding `membership`. */
  leases: Informer<Lease>;
  membership: ShardMembership;
}

export interface SharderOptions {
  /** Changes are gathered this long before a pass, so a burst of events makes one pass. */
  batchMs?: number;
  /** A pass at least this often (Leases expire without an event). */
  maxIntervalMs?: number;
  /** Moves in flight at once. */
  concurrency?: number;
}

/**
 * The sharder, run by the leader of the sharded controllers (after kubernetes-controller-sharding's
 * sharder): it watches the shard Leases and every StaticSite, and moves each site whose label does
 * not name the ring's shard for it (shard-moves.ts). Each move is an update of the site as judged,
 * its labels changed, conditional on that resourceVersion (the controller's RBAC has `update` on
 * sites, not `patch`): a site changed meanwhile is judged again, never overwritten.
 */
export class Sharder {
  private readonly deps: SharderDeps;
  private readonly batchMs: number;
  private readonly maxIntervalMs: number;
  private readonly concurrency: number;
  /** The resourceVersion each site had when it was last moved: judged again only once it changed. */
  private readonly moved = new Map<string, string | undefined>();
  private wake: (() => void) | undefined;
  private dirty = true;

  constructor(deps: SharderDeps, options: SharderOptions = {}) {
    this.deps = deps;
    this.batchMs = options.batchMs ?? 100;
    this.maxIntervalMs = options.maxIntervalMs ?? 1_000;
    this.concurrency = options.concurrency ?? 16;
    deps.leases.onChange((type, lease) => {
      deps.membership.observe(type, lease);
      this.changed();
    });
    deps.sites.onChange((type, site) => {
      if (type === 'delete') this.moved.delete(objectKey(site));
      this.changed();
    });
  }

  private changed(): void {
    this.dirty = true;
    this.wake?.();
  }

  /** Until `active` aborts: waits for both caches, then moves sites whenever the shards or the sites change. */
  async run(active: AbortSignal): Promise<void> {
    const { sites, leases, clock, logger } = this.deps;
    sites.start();
    leases.start();
    try {
      await Promise.race([
        Promise.all([sites.waitForSync(), leases.waitForSync()]),
        new Promise<void>((resolve) => active.addEventListener('abort', () => resolve(), { once: true })),
      ]);
      logger.info({}, 'sharder: caches synced');
      while (!active.aborted) {
        if (this.dirty) await sleep(clock, this.batchMs, active);
        this.dirty = false;
        if (!active.aborted) await this.pass(active);
        const expiry = this.deps.membership.untilNextExpiry();
        const wait = Math.max(1, Math.min(this.maxIntervalMs, expiry === undefined ? Infinity : expiry + 1));
        if (!this.dirty) await this.sleepUntilChange(wait, active);
      }
    } finally {
      await Promise.all([sites.stop(), leases.stop()]);
    }
  }

  private async sleepUntilChange(ms: number, active: AbortSignal): Promise<void> {
    const woken = new AbortController();
    const onAbort = () => woken.abort();
    active.addEventListener('abort', onAbort, { once: true });
    this.wake = () => woken.abort();
    try {
      await sleep(this.deps.clock, ms, woken.signal);
    } finally {
      this.wake = undefined;
      active.removeEventListener('abort', onAbort);
    }
  }

  /** One pass over every site; returns the moves made. */
  async pass(active?: AbortSignal): Promise<ShardMove[]> {
    const { membership, sites } = this.deps;
    const ring = membership.ring();
    const live = new Set(ring.shards);
    const todo: Array<[StaticSiteV1, ShardMove]> = [];
    for (const site of sites.list()) {
      const key = objectKey(site);
      const version = site.metadata.resourceVersion;
      if (this.moved.has(key) && this.moved.get(key) === version) continue;
      const move = shardMove(key, site, ring, (shard) => live.has(shard));
      if (move) todo.push([site, move]);
    }
    const done: ShardMove[] = [];
    let next = 0;
    const worker = async () => {
      while (next < todo.length && !active?.aborted) {
        const [site, move] = todo[next++] as [StaticSiteV1, ShardMove];
        if (await this.apply(site, move)) done.push(move);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, todo.length) }, worker));
    if (todo.length > 0) {
      const count = (kind: ShardMove['kind']) => done.filter((m) => m.kind === kind).length;
      this.deps.logger.info(
        {
          shards: ring.shards,
          assigned: count('assign'),
          drained: count('drain'),
          undrained: count('undrain'),
          failed: todo.length - done.length,
        },
        'sharder: moved sites',
      );
    }
    return done;
  }

  private async apply(site: StaticSiteV1, move: ShardMove): Promise<boolean> {
    const { api, logger, metrics } = this.deps;
    const key = objectKey(site);
    try {
      await api.update(STATICSITES, movedSite(site, move));
      this.moved.set(key, site.metadata.resourceVersion);
      metrics.shardMoves.inc({ kind: move.kind, result: 'ok' });
      logger.debug({ site: key, move }, 'sharder: moved');
      return true;
    } catch (error) {
      // Changed or gone meanwhile: the watch brings the new state and the next pass judges it again.
      const routine = isConflict(error) || isNotFound(error);
      metrics.shardMoves.inc({ kind: move.kind, result: routine ? 'conflict' : 'error' });
      if (!routine) logger.warn({ site: key, move, err: errorMessage(error) }, 'sharder: move failed');
      return false;
    }
  }
}
