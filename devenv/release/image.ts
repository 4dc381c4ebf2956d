/**
 * A release's operator image, built from its own tree (its Dockerfile, its lockfile) on the local
 * bases `npm run image` makes, and kept outside the repository keyed by the release's commit: in
 * Docker as `staticsite-operator-release:<commit>`, and as a `docker save` tar under
 * ~/.cache/staticsite-operator/release-images/, so a machine whose Docker store was reset loads it
 * instead of building it again.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { packageFile } from '../../cli/package-root.ts';
import type { ReleaseTree } from './tree.ts';

const run = promisify(execFile);
const KEY_LABEL = 'dev.staticsite.release-commit';
/** The bases devenv/image/build.sh makes (its step 2): the release's Dockerfile takes them as build args. */
const BUILD_BASE = 'staticsite-local/node:24';
const RUNTIME_BASE = 'staticsite-local/nodejs24-runtime:nonroot';

export interface ReleaseImage {
  /** The Docker image. */
  image: string;
  /** What making it took: `built` (ms), `loaded` from the tar, or `cached` in Docker. */
  how: 'built' | 'loaded' | 'cached';
  ms: number;
}

async function labelOf(image: string): Promise<string> {
  const format = `{{ index .Config.Labels "${KEY_LABEL}" }}`;
  return run('docker', ['image', 'inspect', '--format', format, image])
    .then(({ stdout }) => stdout.trim())
    .catch(() => '');
}

/** The release's image in Docker, built once per commit (needs the bases: run `npm run image` first). */
export async function releaseImage(tree: ReleaseTree): Promise<ReleaseImage> {
  const started = Date.now();
  const image = `staticsite-operator-release:${tree.commit}`;
  await run('bash', [packageFile('devenv', 'image', 'docker-engine.sh')], { timeout: 120_000 });
  if ((await labelOf(image)) === tree.commit) return { image, how: 'cached', ms: Date.now() - started };
  const cacheDir = join(homedir(), '.cache', 'staticsite-operator', 'release-images');
  const tar = join(cacheDir, `${tree.commit}.tar`);
  if (existsSync(tar)) {
    await run('docker', ['load', '--quiet', '--input', tar], { timeout: 300_000 });
    if ((await labelOf(image)) === tree.commit) return { image, how: 'loaded', ms: Date.now() - started };
  }
  process.stderr.write(`building ${tree.label}'s image ${image} from ${tree.dir} (once)...\n`);
  await run(
    'docker',
    [
      'build',
      '--quiet',
      '--network',
      'host',
      '--label',
      `${KEY_LABEL}=${tree.commit}`,
      '--build-arg',
      `BUILD_BASE=${BUILD_BASE}`,
      '--build-arg',
      `RUNTIME_BASE=${RUNTIME_BASE}`,
      '--build-arg',
      `STATICSITE_COMMIT=${tree.commit}`,
      '-t',
      image,
      tree.dir,
    ],
    { timeout: 30 * 60_000, maxBuffer: 16 << 20 },
  );
  mkdirSync(cacheDir, { recursive: true });
  await run('docker', ['save', '--output', `${tar}.partial`, image], { timeout: 300_000 });
  renameSync(`${tar}.partial`, tar);
  return { image, how: 'built', ms: Date.now() - started };
}
