/**
 * `npm run release -- X.Y.Z [--date YYYY-MM-DD] [--image]`: cuts release X.Y.Z from HEAD.
 *
 * 1. Refuses a tree with tracked changes (staged or not), a version not greater than package.json's,
 *    an existing tag vX.Y.Z, files whose version literal already differs from package.json, and an
 *    empty `## [Unreleased]` in CHANGELOG.md.
 * 2. Moves the `## [Unreleased]` entries under `## [X.Y.Z] - DATE` (today, UTC, unless --date) with
 *    `Commit: \`<HEAD>\``: the commit the release is cut from (devenv/release/changelog.ts).
 * 3. Writes X.Y.Z into package.json, package-lock.json, the chart (version, appVersion), the
 *    kustomize image tag, docker-compose.yml and the docs that name the image
 *    (devenv/release/versioned-files.ts).
 * 4. Commits exactly those files as "release X.Y.Z" and tags that commit vX.Y.Z (annotated).
 * 5. With --image, builds the image staticsite-operator:X.Y.Z (`npm run image`, needs Docker).
 *
 * Pushing is left to you: `git push origin HEAD vX.Y.Z`.
 * Exit codes: 0 released, 1 refused or failed, 2 usage error.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { packageRoot } from '../../cli/package-root.ts';
import { cutRelease } from './changelog.ts';
import { compareVersions, packageVersion, parseVersion, versionLiterals, writeVersion } from './versioned-files.ts';

const USAGE = 'usage: npm run release -- X.Y.Z [--date YYYY-MM-DD] [--image]';

class Refusal extends Error {}

function git(root: string, ...args: string[]): string {
  const result = spawnSync('git', ['-C', root, ...args], { encoding: 'utf8' });
  if (result.error) throw new Refusal(`git ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) throw new Refusal(`git ${args.join(' ')}: exit ${result.status}\n${result.stderr.trim()}`);
  return result.stdout.trimEnd();
}

function release(root: string, version: string, date: string, image: boolean): void {
  const current = packageVersion(root);
  const next = parseVersion(version);
  const now = parseVersion(current);
  if (!next) throw new Refusal(`"${version}" is not a version X.Y.Z`);
  if (!now) throw new Refusal(`package.json's version "${current}" is not a version X.Y.Z`);
  if (compareVersions(next, now) <= 0) {
    throw new Refusal(`${version} is not greater than the current version ${current}`);
  }

  const dirty = git(root, 'status', '--porcelain', '--untracked-files=no');
  if (dirty !== '') throw new Refusal(`the tree has uncommitted changes; commit or drop them first:\n${dirty}`);
  const tag = `v${version}`;
  if (spawnSync('git', ['-C', root, 'rev-parse', '--verify', '--quiet', `refs/tags/${tag}`]).status === 0) {
    throw new Refusal(`the tag ${tag} exists already`);
  }
  const stale = versionLiterals(root).filter((literal) => literal.version !== current);
  if (stale.length > 0) {
    const list = stale.map((s) => `  ${s.path}: ${s.what} is ${s.version}`).join('\n');
    throw new Refusal(`these files do not hold package.json's version ${current}:\n${list}`);
  }

  const from = git(root, 'rev-parse', 'HEAD');
  const changelogPath = join(root, 'CHANGELOG.md');
  let changelog: string;
  try {
    changelog = cutRelease(readFileSync(changelogPath, 'utf8'), version, date, from);
  } catch (error) {
    throw new Refusal((error as Error).message);
  }
  const written = writeVersion(root, version);
  writeFileSync(changelogPath, changelog);

  const paths = ['CHANGELOG.md', ...written];
  try {
    git(root, 'add', '--', ...paths);
    git(root, 'commit', '--quiet', '-m', `release ${version}`, '--', ...paths);
  } catch (error) {
    throw new Refusal(
      `${(error as Error).message}\nthe release's edits are left in the tree; drop them with: git checkout HEAD -- ${paths.join(' ')}`,
    );
  }
  git(root, 'tag', '--annotate', '--message', `release ${version}`, tag);
  const commit = git(root, 'rev-parse', 'HEAD');
  process.stdout.write(
    `release ${version}: commit ${commit}, tag ${tag}, cut from ${from} (CHANGELOG.md's Commit line)\n` +
      `changed: ${paths.join(', ')}\n`,
  );

  if (image) {
    const built = spawnSync('npm', ['run', 'image'], { cwd: root, stdio: 'inherit' });
    if (built.status !== 0) {
      throw new Refusal(`npm run image failed (exit ${built.status ?? built.signal}); the commit and ${tag} stay`);
    }
  }
  process.stdout.write(`publish it with: git push origin HEAD ${tag}\n`);
}

function main(argv: string[]): number {
  let args: { values: { date?: string; image: boolean; help?: boolean }; positionals: string[] };
  try {
    args = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { date: { type: 'string' }, image: { type: 'boolean', default: false }, help: { type: 'boolean' } },
    });
  } catch (error) {
    process.stderr.write(`release: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = args;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const date = values.date ?? new Date().toISOString().slice(0, 10);
  const day = new Date(`${date}T00:00:00Z`);
  const realDate =
    /^\d{4}-\d{2}-\d{2}$/.test(date) && !Number.isNaN(day.getTime()) && day.toISOString().startsWith(date);
  if (positionals.length !== 1 || !realDate) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  try {
    release(packageRoot(), positionals[0] ?? '', date, values.image);
    return 0;
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    process.stderr.write(`release: ${error.message}\n`);
    return 1;
  }
}

process.exitCode = main(process.argv.slice(2));
