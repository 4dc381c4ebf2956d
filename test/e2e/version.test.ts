/**
 * `staticsite --version` of the built CLI (node dist/bin/staticsite.js, what `npx staticsite` and
 * the image run), as a process: package.json's version and the commit `npm run build` recorded.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { COMMIT_FILE } from '../../cli/build-commit.ts';
import { packageRoot } from '../../cli/package-root.ts';
import { packageVersion } from '../../devenv/release/versioned-files.ts';
import { builtCli } from '../../devenv/webhook-process.ts';

describe('e2e: staticsite --version (the built CLI)', () => {
  const root = packageRoot();

  for (const flag of ['--version', 'version']) {
    it(`${flag}: the version and the commit of the build, exit 0`, () => {
      const child = spawnSync(process.execPath, [builtCli(), flag], { encoding: 'utf8' });
      expect({ status: child.status, stderr: child.stderr }).to.deep.equal({ status: 0, stderr: '' });
      const printed = /^staticsite (\S+) \(commit (\S+)\)\n$/.exec(child.stdout);
      expect(printed, child.stdout).to.not.equal(null);
      expect(printed?.[1]).to.equal(packageVersion(root));
      const commit = printed?.[2] ?? '';
      expect(commit).to.equal(readFileSync(join(root, 'dist', 'bin', COMMIT_FILE), 'utf8').trim());
      // Built in this checkout: a commit of it (later commits may have come since the build).
      expect(commit).to.match(/^[0-9a-f]{40}(-dirty)?$/);
      const known = spawnSync('git', ['-C', root, 'cat-file', '-e', `${commit.replace(/-dirty$/, '')}^{commit}`]);
      expect(known.status, `${commit} is a commit of ${root}`).to.equal(0);
    });
  }
});
