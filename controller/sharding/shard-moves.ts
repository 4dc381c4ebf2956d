import { DRAIN_LABEL, SHARD_LABEL } from '../../api/constants.ts';
import type { KubeObject } from '../../kube/objects.ts';
import type { HashRing } from '../../sharding/hash-ring.ts';

/** What the sharder does to one site so that its label names the ring's shard for it. */
export type ShardMove =
  /** No shard, or a dead one (it stopped reconciling before its Lease expired): label it now. */
  | { kind: 'assign'; from: string | undefined; to: string }
  /** A live shard holds it and another should: ask the holder to hand it over (the drain handshake). */
  | { kind: 'drain'; from: string; to: string }
  /** Drained, but the ring gives it back to its holder before the hand-over: the drain is withdrawn. */
  | { kind: 'undrain'; shard: string };

export function shardOf(site: KubeObject): string | undefined {
  return site.metadata.labels?.[SHARD_LABEL] || undefined;
}

export function isDraining(site: KubeObject): boolean {
  return site.metadata.labels?.[DRAIN_LABEL] !== undefined;
}

/**
 * The move that makes `site` the ring's shard's, or none. A site of a live shard is never relabelled
 * directly: only that shard may let it go (by removing its labels once it saw the drain label), so no
 * two shards ever reconcile a site at once. With no live shard there is nowhere to move to.
 */
export function shardMove(
  key: string,
  site: KubeObject,
  ring: HashRing,
  isLive: (shard: string) => boolean,
): ShardMove | undefined {
  const to = ring.shardFor(key);
  if (to === undefined) return undefined;
  const from = shardOf(site);
  if (from === undefined || !isLive(from)) return { kind: 'assign', from, to };
  if (from === to) return isDraining(site) ? { kind: 'undrain', shard: from } : undefined;
  return isDraining(site) ? undefined : { kind: 'drain', from, to };
}

/** The site after `move`: only its shard and drain labels differ (written with its resourceVersion). */
export function movedSite<T extends KubeObject>(site: T, move: ShardMove): T {
  const labels = { ...site.metadata.labels };
  if (move.kind === 'assign') labels[SHARD_LABEL] = move.to;
  if (move.kind === 'drain') labels[DRAIN_LABEL] = 'true';
  else delete labels[DRAIN_LABEL];
  return { ...site, metadata: { ...site.metadata, labels } };
}
