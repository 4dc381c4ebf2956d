import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';

/**
 * The commit a build of `dir` comes from, for `staticsite --version`: $STATICSITE_COMMIT when set
 * (the image build passes it in: the Docker build context has no .git), else `git rev-parse HEAD`
 * with `-dirty` appended when a tracked file differs from it, else `unknown` (no git, or `dir` is not
 * the top of a checkout: a package unpacked inside another project's repository is not that commit).
 */
export function sourceCommit(dir: string, env: NodeJS.ProcessEnv = process.env): string {
  const given = env.STATICSITE_COMMIT?.trim();
  if (given) return given;
  const git = (...args: string[]) => spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8' });
  const top = git('rev-parse', '--show-toplevel');
  if (top.status !== 0 || top.stdout.trim() !== realpathSync(dir)) return 'unknown';
  const head = git('rev-parse', '--verify', '--quiet', 'HEAD^{commit}');
  if (head.status !== 0 || !/^[0-9a-f]{40}\n$/.test(head.stdout)) return 'unknown';
  const status = git('status', '--porcelain', '--untracked-files=no');
  const dirty = status.status !== 0 || status.stdout.trim() !== '';
  return `${head.stdout.trim()}${dirty ? '-dirty' : ''}`;
}
