import { SHARD_LABEL } from '../../api/index.ts';

/** How many of `sites` each shard label holds (`(none)` for the unlabelled). */
export function sitesPerShard(sites: ReadonlyArray<{ metadata: { labels?: Record<string, string> } }>) {
  const counts: Record<string, number> = {};
  for (const s of sites) {
    const shard = s.metadata.labels?.[SHARD_LABEL] ?? '(none)';
    counts[shard] = (counts[shard] ?? 0) + 1;
  }
  return counts;
}
