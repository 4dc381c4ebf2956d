/** Points each shard takes on the ring: with 3 shards the largest share is within about 10% of a third. */
export const TOKENS_PER_SHARD = 128;

/** 32-bit FNV-1a over the UTF-16 code units, then murmur3's finalizer so near-identical keys spread. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * A consistent-hash ring: each shard owns the arcs that end at its tokens, so adding or removing a
 * shard moves only about 1/N of the keys, and every process that knows the same shards computes the
 * same owner for a key (the webhook at admission, the sharder when the shards change).
 */
export class HashRing {
  readonly shards: readonly string[];
  private readonly tokens: Uint32Array;
  private readonly owners: string[];

  constructor(shards: Iterable<string>) {
    this.shards = [...new Set(shards)].sort();
    const points: Array<[number, string]> = [];
    for (const shard of this.shards) {
      for (let i = 0; i < TOKENS_PER_SHARD; i++) points.push([hash32(`${shard}/${i}`), shard]);
    }
    // Equal tokens (a 32-bit collision) go to the smaller name, the same in every process.
    points.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    this.tokens = Uint32Array.from(points, (p) => p[0]);
    this.owners = points.map((p) => p[1]);
  }

  /** The shard that owns `key` (namespace/name): the first token at or after its hash, wrapping. None on an empty ring. */
  shardFor(key: string): string | undefined {
    const n = this.tokens.length;
    if (n === 0) return undefined;
    const h = hash32(key);
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.tokens[mid] as number) < h) lo = mid + 1;
      else hi = mid;
    }
    return this.owners[lo === n ? 0 : lo];
  }
}
