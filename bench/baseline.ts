/**
 * The tree a benchmark compares the working tree with, side by side in the same run: the last
 * release (the newest `## [X.Y.Z]` of CHANGELOG.md with its commit), or the commit named in
 * BENCH_BASELINE. Its files come out of git (`git archive`, no worktree registered) into the cache,
 * keyed by the full commit, with its own `npm ci`; the benchmarks run its sources as they run ours.
 * BENCH_BASELINE=none turns the comparison off.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../', import.meta.url).pathname;

export interface BaselineTree {
  /** What the reports call it: `v0.1.0 (598eeba)` or the commit named. */
  label: string;
  commit: string;
  dir: string;
}

/** The newest release in CHANGELOG.md that names its commit: `## [0.1.0] - 2026-12-06` then `Commit: <sha>`. */
export function lastRelease(changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8')) {
  const release = /^## \[(\d+\.\d+\.\d+)\][^\n]*\n+(?:[^\n#]*\n)*?Commit: `?([0-9a-f]{7,40})`?/m.exec(changelog);
  return release ? { version: release[1] as string, commit: release[2] as string } : undefined;
}

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
  if (wanted === undefined) return undefined;
  const commit = execFileSync('git', ['rev-parse', '--verify', `${wanted.commit}^{commit}`], { cwd: root })
    .toString()
    .trim();
  const dir = join(homedir(), '.cache', 'staticsite-operator', 'baseline', commit);
  const ready = join(dir, '.ready');
  if (!existsSync(ready)) {
    process.stderr.write(`preparing the baseline ${wanted.label} in ${dir} (once)...\n`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execFileSync('bash', ['-c', `git archive ${commit} | tar -x -C ${JSON.stringify(dir)}`], { cwd: root });
    execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'ignore' });
    writeFileSync(ready, `${commit}\n`);
  }
  return { label: wanted.label, commit, dir };
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
