import type { Clock } from '../clock/clock.ts';
import type { ChangeType } from '../kube/informer.ts';
import type { Lease } from '../kube/objects.ts';
import { HashRing } from './hash-ring.ts';

interface ObservedLease {
  holder: string;
  durationMs: number;
  /** Our clock's time when this Lease's spec last changed. */
  observedAt: number;
  spec: string;
}

/**
 * Which shards are live, from their Leases as an informer delivers them. A Lease is live while it has
 * a holder and its spec changed (a renewal) within its duration, measured on this process's clock
 * from the moment the change was observed, as client-go's leader election judges a lease: clock skew
 * between machines never makes a shard look dead early. A shard that stops renewing is dead one
 * lease duration after its last renewal was seen; one that released its Lease (no holder) is dead at
 * once.
 */
export class ShardMembership {
  private readonly clock: Clock;
  private readonly shardLabel: string;
  private readonly leases = new Map<string, ObservedLease>();
  private cachedRing: HashRing | undefined;
  private cachedFor = '';

  /** `shardLabel`: the label whose value on a Lease is the shard's name. */
  constructor(clock: Clock, shardLabel: string) {
    this.clock = clock;
    this.shardLabel = shardLabel;
  }

  /** An informer change of a shard Lease. */
  observe(type: ChangeType, lease: Lease): void {
    const shard = lease.metadata.labels?.[this.shardLabel];
    if (!shard) return;
    if (type === 'delete') {
      this.leases.delete(shard);
      return;
    }
    const spec = JSON.stringify(lease.spec ?? {});
    const known = this.leases.get(shard);
    if (known?.spec === spec) return;
    this.leases.set(shard, {
      holder: lease.spec?.holderIdentity ?? '',
      durationMs: (lease.spec?.leaseDurationSeconds ?? 0) * 1000,
      observedAt: this.clock.monotonic(),
      spec,
    });
  }

  isLive(shard: string, now = this.clock.monotonic()): boolean {
    const lease = this.leases.get(shard);
    return lease !== undefined && lease.holder !== '' && now < lease.observedAt + lease.durationMs;
  }

  /** The live shards, sorted. */
  liveShards(now = this.clock.monotonic()): string[] {
    return [...this.leases.keys()].filter((shard) => this.isLive(shard, now)).sort();
  }

  /** The ring of the live shards (the same object while they stay the same). */
  ring(now = this.clock.monotonic()): HashRing {
    const live = this.liveShards(now);
    const key = live.join('\n');
    if (!this.cachedRing || key !== this.cachedFor) {
      this.cachedRing = new HashRing(live);
      this.cachedFor = key;
    }
    return this.cachedRing;
  }

  /** Milliseconds until the next live Lease expires unless renewed (undefined: none is live). */
  untilNextExpiry(now = this.clock.monotonic()): number | undefined {
    let next: number | undefined;
    for (const lease of this.leases.values()) {
      const expires = lease.observedAt + lease.durationMs;
      if (lease.holder === '' || expires <= now) continue;
      next = next === undefined ? expires - now : Math.min(next, expires - now);
    }
    return next;
  }
}
