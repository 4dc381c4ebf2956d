/**
 * One version, package.json's: every file that must hold it as a literal holds the same one, the
 * changelog's newest release is it, and the build's commit reaches `staticsite --version`.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { load } from 'js-yaml';
import { buildCommit, COMMIT_FILE } from '../../cli/build-commit.ts';
import { sourceCommit } from '../../devenv/build/source-commit.ts';
import { cutRelease, releases } from '../../devenv/release/changelog.ts';
import {
  compareVersions,
  packageVersion,
  parseVersion,
  VERSIONED_JSON,
  VERSIONED_TEXT,
  versionLiterals,
  writeVersion,
} from '../../devenv/release/versioned-files.ts';

const root = new URL('../../', import.meta.url).pathname;
const version = packageVersion(root);
const read = (path: string) => readFileSync(join(root, path), 'utf8');

describe('version: package.json is the one source', () => {
  it('is a version X.Y.Z', () => {
    expect(parseVersion(version), version).to.not.equal(undefined);
  });

  it("every literal of it (chart, kustomize image tag, compose, lock file, docs) is package.json's", () => {
    const literals = versionLiterals(root);
    expect(literals.length).to.be.greaterThan(VERSIONED_TEXT.length);
    const wrong = literals.filter((l) => l.version !== version).map((l) => `${l.path}: ${l.what} is ${l.version}`);
    expect(wrong, `package.json says ${version}; npm run release writes them all`).to.deep.equal([]);
  });

  it("the chart's image tag defaults to its appVersion", () => {
    const values = load(read('charts/staticsite-operator/values.yaml')) as { image: { tag: string } };
    expect(values.image.tag).to.equal('');
    expect(read('charts/staticsite-operator/templates/_helpers.tpl')).to.include(
      '{{ .Values.image.tag | default .Chart.AppVersion }}',
    );
  });

  it('the Deployments name the image without a tag, and their kustomizations take it from the component', () => {
    for (const [dir, file] of [
      ['webhook', 'webhook.yaml'],
      ['controller', 'controller.yaml'],
      ['certs', 'certs.yaml'],
    ] as const) {
      expect(read(`manifests/${dir}/${file}`), file).to.match(/^ {10}image: staticsite-operator$/m);
      expect(read(`manifests/${dir}/${file}`), file).to.not.match(/staticsite-operator:/);
      const kustomization = load(read(`manifests/${dir}/kustomization.yaml`)) as { components?: string[] };
      expect(kustomization.components, dir).to.include('../components/operator-image');
    }
  });

  it('no other file under manifests/ or charts/ names a tagged operator image', () => {
    const listed = spawnSync('git', [
      '-C',
      root,
      'grep',
      '-l',
      '-E',
      'staticsite-operator:[0-9]',
      '--',
      'manifests',
      'charts',
    ]);
    // git grep exits 1 when nothing matches (and 128 outside a checkout: then there is nothing to check).
    expect(listed.stdout.toString()).to.equal('');
  });
});

describe('version: CHANGELOG.md', () => {
  const changelog = read('CHANGELOG.md');
  const listed = releases(changelog);

  it("has ## [Unreleased] first, and its newest release is package.json's version", () => {
    expect(changelog).to.match(/^# Changelog\n[\s\S]*?^## \[Unreleased\]\n/m);
    expect(changelog.indexOf('## [Unreleased]')).to.be.below(changelog.indexOf('## ['.concat(version, ']')));
    expect(listed[0]?.version).to.equal(version);
  });

  it('names under each release heading the commit it was cut from, 40 hex digits, newest release first', () => {
    expect(listed.length).to.be.greaterThan(0);
    for (const release of listed) expect(release.commit, release.version).to.match(/^[0-9a-f]{40}$/);
    for (let i = 1; i < listed.length; i++) {
      const [newer, older] = [parseVersion(listed[i - 1]?.version ?? ''), parseVersion(listed[i]?.version ?? '')];
      expect(newer && older && compareVersions(newer, older), `${listed[i]?.version}`).to.be.greaterThan(0);
    }
  });
});

describe('version: a release in CHANGELOG.md (devenv/release/changelog.ts)', () => {
  const before = [
    '# Changelog',
    '',
    'Intro.',
    '',
    '## [Unreleased]',
    '',
    '### Added',
    '- A thing.',
    '',
    '## [0.1.0] - 2026-12-06',
    '',
    `Commit: \`${'a'.repeat(40)}\``,
    '',
    'The first release.',
    '',
  ].join('\n');

  it('moves the Unreleased entries under the new heading with its Commit line; Unreleased stays, empty', () => {
    expect(cutRelease(before, '0.2.0', '2027-01-15', 'b'.repeat(40))).to.equal(
      [
        '# Changelog',
        '',
        'Intro.',
        '',
        '## [Unreleased]',
        '',
        '## [0.2.0] - 2027-01-15',
        '',
        `Commit: \`${'b'.repeat(40)}\``,
        '',
        '### Added',
        '- A thing.',
        '',
        '## [0.1.0] - 2026-12-06',
        '',
        `Commit: \`${'a'.repeat(40)}\``,
        '',
        'The first release.',
        '',
      ].join('\n'),
    );
  });

  it('what it writes parses back: newest first, each with its commit', () => {
    const after = cutRelease(before, '0.2.0', '2027-01-15', 'b'.repeat(40));
    expect(releases(after)).to.deep.equal([
      { version: '0.2.0', date: '2027-01-15', commit: 'b'.repeat(40) },
      { version: '0.1.0', date: '2026-12-06', commit: 'a'.repeat(40) },
    ]);
  });

  it('refuses an empty Unreleased section and a changelog without one', () => {
    const released = cutRelease(before, '0.2.0', '2027-01-15', 'b'.repeat(40));
    expect(() => cutRelease(released, '0.3.0', '2027-02-01', 'c'.repeat(40))).to.throw(/nothing to release/);
    expect(() => cutRelease('# Changelog\n', '0.3.0', '2027-02-01', 'c'.repeat(40))).to.throw(/no "## \[Unreleased\]"/);
  });
});

describe('version: writeVersion (npm run release)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'version-'));
    for (const path of [...VERSIONED_JSON, ...VERSIONED_TEXT.map((f) => f.path)]) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      cpSync(join(root, path), join(dir, path));
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the new version into every literal and changes nothing else', () => {
    writeVersion(dir, '9.8.7');
    expect(packageVersion(dir)).to.equal('9.8.7');
    expect(versionLiterals(dir).filter((l) => l.version !== '9.8.7')).to.deep.equal([]);
    for (const { path } of VERSIONED_TEXT) {
      expect(readFileSync(join(dir, path), 'utf8').replaceAll('9.8.7', version), path).to.equal(read(path));
    }
    for (const path of VERSIONED_JSON) {
      const changed = JSON.parse(readFileSync(join(dir, path), 'utf8'));
      const original = JSON.parse(read(path));
      original.version = '9.8.7';
      if (original.packages?.['']) original.packages[''].version = '9.8.7';
      expect(changed, path).to.deep.equal(original);
    }
  });
});

describe('version: the commit of the build (staticsite --version)', () => {
  let dir: string;
  const git = (...args: string[]) => spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8' });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'source-commit-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a tree without git: unknown', () => {
    expect(sourceCommit(dir, {})).to.equal('unknown');
  });

  it("a checkout: HEAD, with -dirty when a tracked file changed (an untracked one doesn't count)", () => {
    git('init', '--quiet');
    writeFileSync(join(dir, 'a.txt'), 'one\n');
    git('add', 'a.txt');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '--quiet', '-m', 'one');
    const head = git('rev-parse', 'HEAD').stdout.trim();
    expect(sourceCommit(dir, {})).to.equal(head);
    writeFileSync(join(dir, 'untracked.txt'), 'x\n');
    expect(sourceCommit(dir, {})).to.equal(head);
    writeFileSync(join(dir, 'a.txt'), 'two\n');
    expect(sourceCommit(dir, {})).to.equal(`${head}-dirty`);
  });

  it("a directory inside another project's checkout is not that project's commit: unknown", () => {
    git('init', '--quiet');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '--quiet', '--allow-empty', '-m', 'one');
    mkdirSync(join(dir, 'node_modules', 'staticsite-operator'), { recursive: true });
    expect(sourceCommit(join(dir, 'node_modules', 'staticsite-operator'), {})).to.equal('unknown');
  });

  it('$STATICSITE_COMMIT wins (the image build passes it in)', () => {
    expect(sourceCommit(dir, { STATICSITE_COMMIT: 'c'.repeat(40) })).to.equal('c'.repeat(40));
  });

  it('the CLI reads the file beside its module, and says unknown without one', () => {
    const moduleUrl = pathToFileURL(join(dir, 'staticsite.js')).href;
    expect(buildCommit(moduleUrl)).to.equal('unknown');
    writeFileSync(join(dir, COMMIT_FILE), `${'d'.repeat(40)}\n`);
    expect(buildCommit(moduleUrl)).to.equal('d'.repeat(40));
  });
});
