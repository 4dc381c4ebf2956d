/**
 * `npm run release -- X.Y.Z` (devenv/release/release.ts) on a clone of this repository, with the
 * working tree's release script and versioned files committed on top, and a fixed date: what it
 * refuses, and what a release writes, commits and tags. No image is built (no --image).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { load } from 'js-yaml';
import { packageRoot } from '../../cli/package-root.ts';
import { releases } from '../../devenv/release/changelog.ts';
import { packageVersion, VERSIONED_JSON, VERSIONED_TEXT } from '../../devenv/release/versioned-files.ts';

const root = packageRoot();
/** What the script needs besides the files it writes. */
const SCRIPT_FILES = [
  'devenv/release/release.ts',
  'devenv/release/changelog.ts',
  'devenv/release/versioned-files.ts',
  'cli/package-root.ts',
];
const WRITTEN = ['CHANGELOG.md', ...VERSIONED_JSON, ...new Set(VERSIONED_TEXT.map((f) => f.path))];
const IDENTITY = ['-c', 'user.name=release test', '-c', 'user.email=release-test@example.com'];

describe('e2e: npm run release (devenv/release/release.ts) on a clone', function () {
  this.timeout(120_000);
  let clone: string;
  let from: string;
  let changelogBefore: string;
  const current = packageVersion(root);
  const [major, minor] = current.split('.').map(Number);
  const next = `${major}.${(minor ?? 0) + 1}.0`;

  const git = (...args: string[]) => {
    const result = spawnSync('git', ['-C', clone, ...IDENTITY, ...args], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
    return result.stdout.trim();
  };
  const release = (...args: string[]) => {
    const env = { ...process.env, GIT_AUTHOR_NAME: 'release test', GIT_AUTHOR_EMAIL: 'release-test@example.com' };
    Object.assign(env, { GIT_COMMITTER_NAME: env.GIT_AUTHOR_NAME, GIT_COMMITTER_EMAIL: env.GIT_AUTHOR_EMAIL });
    return spawnSync(process.execPath, ['devenv/release/release.ts', ...args], { cwd: clone, encoding: 'utf8', env });
  };
  const file = (path: string) => readFileSync(join(clone, path), 'utf8');

  before(() => {
    clone = mkdtempSync(join(tmpdir(), 'release-'));
    const cloned = spawnSync('git', ['clone', '--quiet', '--no-hardlinks', root, clone], { encoding: 'utf8' });
    expect(cloned.status, cloned.stderr).to.equal(0);
    // This working tree's script and files, whatever HEAD holds, with one entry to release.
    for (const path of [...SCRIPT_FILES, ...WRITTEN]) {
      mkdirSync(dirname(join(clone, path)), { recursive: true });
      cpSync(join(root, path), join(clone, path));
    }
    const changelog = file('CHANGELOG.md').replace(
      /^## \[Unreleased\]\n/m,
      '## [Unreleased]\n\n### Added\n- The entry the release test moves.\n',
    );
    writeFileSync(join(clone, 'CHANGELOG.md'), changelog);
    git('add', '--', ...SCRIPT_FILES, ...WRITTEN);
    git('commit', '--quiet', '--allow-empty', '-m', 'the working tree of the release test');
    from = git('rev-parse', 'HEAD');
    changelogBefore = file('CHANGELOG.md');
  });
  after(() => rmSync(clone, { recursive: true, force: true }));

  it('refuses a usage error (exit 2), and a version that is not X.Y.Z or not greater (exit 1), changing nothing', () => {
    expect(release().status).to.equal(2);
    expect(release(next, '--date', 'tomorrow').status).to.equal(2);
    for (const [version, reason] of [
      ['v1', /is not a version X\.Y\.Z/],
      [current, /is not greater than the current version/],
      ['0.0.1', /is not greater than the current version/],
    ] as const) {
      const refused = release(version);
      expect(refused.status, version).to.equal(1);
      expect(refused.stderr, version).to.match(reason);
    }
    expect(git('status', '--porcelain')).to.equal('');
    expect(git('rev-parse', 'HEAD')).to.equal(from);
  });

  it('refuses a tree with uncommitted changes to a tracked file', () => {
    writeFileSync(join(clone, 'README.md'), `${file('README.md')}\nedited\n`);
    const refused = release(next);
    git('checkout', '--', 'README.md');
    expect(refused.status).to.equal(1);
    expect(refused.stderr).to.match(/uncommitted changes[\s\S]*README\.md/);
    expect(git('rev-parse', 'HEAD')).to.equal(from);
  });

  it('a release: the changelog, every versioned file, one commit "release X.Y.Z" of those files, the tag', () => {
    const released = release(next, '--date', '2027-01-15');
    expect(released.status, released.stderr).to.equal(0);
    expect(released.stderr).to.equal('');

    const commit = git('rev-parse', 'HEAD');
    expect(git('log', '-1', '--format=%s')).to.equal(`release ${next}`);
    expect(git('rev-parse', 'HEAD^')).to.equal(from);
    expect(git('diff', '--name-only', 'HEAD^', 'HEAD').split('\n').sort()).to.deep.equal([...WRITTEN].sort());
    expect(git('status', '--porcelain', '--untracked-files=no')).to.equal('');
    expect(git('cat-file', '-t', `v${next}`)).to.equal('tag');
    expect(git('rev-parse', `v${next}^{commit}`)).to.equal(commit);
    expect(released.stdout).to.include(`release ${next}: commit ${commit}, tag v${next}, cut from ${from}`);

    // The changelog: the entry under the new heading, whose Commit line names the commit cut from.
    const changelog = file('CHANGELOG.md');
    expect(releases(changelog)[0]).to.deep.equal({ version: next, date: '2027-01-15', commit: from });
    expect(changelog).to.include(
      `## [Unreleased]\n\n## [${next}] - 2027-01-15\n\nCommit: \`${from}\`\n\n### Added\n- The entry the release test moves.\n`,
    );
    const older = changelogBefore.indexOf(`## [${current}]`);
    expect(changelog.endsWith(changelogBefore.slice(older))).to.equal(true);
    expect(changelog.slice(0, changelog.indexOf('## [Unreleased]'))).to.equal(
      changelogBefore.slice(0, changelogBefore.indexOf('## [Unreleased]')),
    );

    // The version everywhere.
    expect(JSON.parse(file('package.json')).version).to.equal(next);
    const lock = JSON.parse(file('package-lock.json'));
    expect([lock.version, lock.packages[''].version]).to.deep.equal([next, next]);
    const chart = load(file('charts/staticsite-operator/Chart.yaml')) as { version: string; appVersion: string };
    expect([chart.version, chart.appVersion]).to.deep.equal([next, next]);
    const component = load(file('manifests/components/operator-image/kustomization.yaml')) as {
      images: Array<{ name: string; newTag: string }>;
    };
    expect(component.images).to.deep.equal([{ name: 'staticsite-operator', newTag: next }]);
    expect(file('docker-compose.yml')).to.include(`image: staticsite-operator:${next}`);
    expect(file('docker-compose.yml')).to.not.include(`staticsite-operator:${current}`);
  });

  it('then refuses the same version again, and a next one with nothing under Unreleased', () => {
    const head = git('rev-parse', 'HEAD');
    const again = release(next);
    expect(again.status).to.equal(1);
    expect(again.stderr).to.match(/is not greater than the current version/);
    const empty = release(`${major}.${(minor ?? 0) + 2}.0`);
    expect(empty.status).to.equal(1);
    expect(empty.stderr).to.match(/nothing to release/);
    expect(git('rev-parse', 'HEAD')).to.equal(head);
    expect(git('status', '--porcelain', '--untracked-files=no')).to.equal('');
    expect(git('tag', '--list', `v${major}.${(minor ?? 0) + 2}.0`)).to.equal('');
  });
});
