/**
 * The tree a benchmark compares the working tree with, side by side in the same run: the last
 * release (the newest `## [X.Y.Z]` of CHANGELOG.md with its commit), or the commit named in
 * BENCH_BASELINE. Its files come out of git (`git archive`, no worktree registered) into the cache,
 * keyed by the full commit, with its own `npm ci` (devenv/release/tree.ts); the benchmarks run its
 * sources as they run ours.
 * BENCH_BASELINE=none turns the comparison off.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lastRelease, type ReleaseTree, releaseTree } from '../devenv/release/tree.ts';
import { webhookRuntime } from '../test/support/webhook-manifest.ts';

export type BaselineTree = ReleaseTree;

/** The baseline to build, or undefined when BENCH_BASELINE=none (or no release names a commit). */
export function baselineCommit(): { label: string; commit: string } | undefined {
  const named = process.env.BENCH_BASELINE;
  if (named === 'none') return undefined;
  if (named) return { label: named, commit: named };
  const release = lastRelease();
  return release && { label: `v${release.version} (${release.commit.slice(0, 7)})`, commit: release.commit };
}

/** The baseline's sources and node_modules in the cache, made once per commit. */
export function baselineTree(): BaselineTree | undefined {
  const wanted = baselineCommit();
  return wanted && releaseTree(wanted.label, wanted.commit, { install: true });
}

/** The baseline's built CLI (`npm run build` in its tree, once, with this Node). */
export function baselineCli(tree: BaselineTree): string {
  const built = join(tree.dir, '.built');
  if (!existsSync(built)) {
    process.stderr.write(`building the baseline ${tree.label} (once)...\n`);
    const path = `${join(process.execPath, '..')}:${process.env.PATH ?? ''}`;
    execFileSync('npm', ['run', 'build'], { cwd: tree.dir, stdio: 'ignore', env: { ...process.env, PATH: path } });
    writeFileSync(built, `${tree.commit}\n`);
  }
  return join(tree.dir, 'dist', 'bin', 'staticsite.js');
}

/**
 * The NODE_OPTIONS the baseline's webhook ships with (its manifest's), so its column is the
 * configuration it was released with; BENCH_BASELINE_NODE_OPTIONS overrides them.
 */
export function baselineNodeOptions(treeDir: string): string {
  return process.env.BENCH_BASELINE_NODE_OPTIONS ?? webhookRuntime(treeDir).nodeOptions;
}
