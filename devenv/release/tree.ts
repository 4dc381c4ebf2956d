/**
 * A release's tree, out of git (`git archive`, no worktree registered) into the cache, keyed by the
 * full commit: what the benchmarks compare with (bench/baseline.ts, with its own `npm ci`) and what
 * the upgrade drill installs (its manifests, its chart, its image: devenv/release/image.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../cli/package-root.ts';

export interface ReleaseTree {
  /** What reports call it: `v0.1.0 (598eeba)` or the commit named. */
  label: string;
  commit: string;
  dir: string;
}

/** The newest release in CHANGELOG.md that names its commit: `## [0.1.0] - 2026-12-06` then `Commit: <sha>`. */
export function lastRelease(changelog = readFileSync(join(packageRoot(), 'CHANGELOG.md'), 'utf8')) {
  const release = /^## \[(\d+\.\d+\.\d+)\][^\n]*\n+(?:[^\n#]*\n)*?Commit: `?([0-9a-f]{7,40})`?/m.exec(changelog);
  return release ? { version: release[1] as string, commit: release[2] as string } : undefined;
}

/** The last release's tree, or undefined when no release in CHANGELOG.md names a commit. */
export function lastReleaseTree(): ReleaseTree | undefined {
  const release = lastRelease();
  return release && releaseTree(`v${release.version} (${release.commit.slice(0, 7)})`, release.commit);
}

/** `commit`'s files in the cache, extracted once; with `install`, its node_modules too (`npm ci`, once). */
export function releaseTree(label: string, commitish: string, options: { install?: boolean } = {}): ReleaseTree {
  const root = packageRoot();
  const commit = execFileSync('git', ['rev-parse', '--verify', `${commitish}^{commit}`], { cwd: root })
    .toString()
    .trim();
  const dir = join(homedir(), '.cache', 'staticsite-operator', 'baseline', commit);
  // `.ready` (sources and node_modules) came first; a tree that has it is extracted too.
  const installed = join(dir, '.ready');
  const extracted = join(dir, '.extracted');
  if (!existsSync(installed) && !existsSync(extracted)) {
    process.stderr.write(`extracting ${label} into ${dir} (once)...\n`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execFileSync('bash', ['-c', `git archive ${commit} | tar -x -C ${JSON.stringify(dir)}`], { cwd: root });
    writeFileSync(extracted, `${commit}\n`);
  }
  if (options.install && !existsSync(installed)) {
    process.stderr.write(`npm ci in ${label}'s tree (once)...\n`);
    execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'ignore' });
    writeFileSync(installed, `${commit}\n`);
  }
  return { label, commit, dir };
}
