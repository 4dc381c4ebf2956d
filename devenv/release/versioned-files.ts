/**
 * The version of the operator is package.json's "version". Every other file that must hold it as
 * a literal is listed here: test/unit/version.test.ts fails when one differs from package.json,
 * and `npm run release` (devenv/release/release.ts) rewrites them all. Everything else reads
 * package.json: `npm run image` (devenv/image/build.sh) tags the image with it, `staticsite
 * --version` prints it, the tests and the real node find the image by it, and the chart's image
 * tag defaults to its appVersion.
 *
 * Node's own modules only: the release script runs in a checkout that may have no node_modules.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A file holding the version as text: each match of `pattern` has the version as its group 1. */
export interface VersionedText {
  path: string;
  pattern: RegExp;
  /** What the match is, for a mismatch's message. */
  what: string;
}

const SEMVER = String.raw`(\d+\.\d+\.\d+)`;

export const VERSIONED_TEXT: VersionedText[] = [
  {
    path: 'charts/staticsite-operator/Chart.yaml',
    pattern: new RegExp(`^version: ${SEMVER}$`, 'gm'),
    what: 'the chart version',
  },
  {
    path: 'charts/staticsite-operator/Chart.yaml',
    pattern: new RegExp(`^appVersion: ${SEMVER}$`, 'gm'),
    what: "the chart's appVersion (the image tag it deploys)",
  },
  {
    path: 'manifests/components/operator-image/kustomization.yaml',
    pattern: new RegExp(`^ {4}newTag: ${SEMVER}$`, 'gm'),
    what: "the kustomize manifests' image tag",
  },
  {
    path: 'docker-compose.yml',
    pattern: new RegExp(`image: staticsite-operator:${SEMVER}$`, 'gm'),
    what: "docker compose's operator image",
  },
  {
    path: 'Dockerfile',
    pattern: new RegExp(`staticsite-operator:${SEMVER}`, 'g'),
    what: 'the image name in the build instructions',
  },
  {
    path: 'README.md',
    pattern: new RegExp(`staticsite-operator:${SEMVER}`, 'g'),
    what: 'the image name in the instructions',
  },
];

/** The JSON files with the version: package.json (the source) and package-lock.json (its two copies). */
export const VERSIONED_JSON = ['package.json', 'package-lock.json'];

export type Version = [number, number, number];

/** `X.Y.Z` (no pre-release or build part), or undefined. */
export function parseVersion(text: string): Version | undefined {
  const match = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/.exec(text);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

/** Negative, zero or positive as `a` is older than, the same as or newer than `b`. */
export function compareVersions(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** package.json's version: the one source. */
export function packageVersion(root: string): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Every literal of the version outside package.json, with where it is: the test compares them. */
export function versionLiterals(root: string): Array<{ path: string; what: string; version: string }> {
  const found: Array<{ path: string; what: string; version: string }> = [];
  for (const { path, pattern, what } of VERSIONED_TEXT) {
    const text = readFileSync(join(root, path), 'utf8');
    const matches = [...text.matchAll(pattern)];
    // A file listed here without its literal is itself a mismatch: the pattern went stale.
    if (matches.length === 0) found.push({ path, what, version: '(none found)' });
    for (const match of matches) found.push({ path, what, version: match[1] ?? '' });
  }
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    version?: string;
    packages?: Record<string, { version?: string }>;
  };
  found.push({ path: 'package-lock.json', what: '"version"', version: lock.version ?? '(none found)' });
  found.push({
    path: 'package-lock.json',
    what: 'packages[""].version',
    version: lock.packages?.['']?.version ?? '(none found)',
  });
  return found;
}

/** Writes `version` into package.json, package-lock.json and every file of VERSIONED_TEXT; returns their paths. */
export function writeVersion(root: string, version: string): string[] {
  const written = new Set<string>();
  const json = (path: string, edit: (value: Record<string, unknown>) => void) => {
    const value = JSON.parse(readFileSync(join(root, path), 'utf8')) as Record<string, unknown>;
    edit(value);
    // npm's own layout: two spaces, a final newline.
    writeFileSync(join(root, path), `${JSON.stringify(value, null, 2)}\n`);
    written.add(path);
  };
  json('package.json', (manifest) => {
    manifest.version = version;
  });
  json('package-lock.json', (lock) => {
    lock.version = version;
    const packages = lock.packages as Record<string, { version?: string }> | undefined;
    const self = packages?.[''];
    if (self) self.version = version;
  });
  for (const { path, pattern } of VERSIONED_TEXT) {
    const file = join(root, path);
    const text = readFileSync(file, 'utf8');
    const next = text.replace(pattern, (match: string, old: string) => match.replace(old, version));
    if (next !== text) writeFileSync(file, next);
    written.add(path);
  }
  return [...written];
}
