/**
 * Bundles the CLI (cli/main.ts) into dist/bin/: the entry, one chunk per command (each still loads
 * only when its command runs) and the chunks they share. A process then loads about 15 files
 * instead of about 110; each ES module costs Node a resolution, a package.json lookup and a link
 * step, and one file through `staticsite validate` went from about 0.24 s of CPU to about 0.15 s
 * (bench/RESULTS.md, "Offline validators"). Dependencies that are ES modules are bundled too; CommonJS ones stay in
 * node_modules, because a CommonJS module inside an ES bundle cannot `require` Node's modules.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { COMMIT_FILE } from '../../cli/build-commit.ts';
import { packageRoot } from '../../cli/package-root.ts';
import { BUILD_ID_FILE } from '../../cli/validate/build-id.ts';
import { sourceCommit } from './source-commit.ts';

/** The ES-module dependencies the CLI loads on every `validate`: bundled. Any other dependency stays external. */
export const BUNDLED_DEPENDENCIES = ['@marcbachmann/cel-js', 'js-yaml', 're2js'];

const root = packageRoot();
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};
const external = Object.keys(manifest.dependencies).filter((name) => !BUNDLED_DEPENDENCIES.includes(name));

await build({
  absWorkingDir: root,
  // The review worker is an entry of its own: the webhook starts it as a thread by its file name.
  entryPoints: { staticsite: 'cli/main.ts', 'review-worker': 'webhook/isolation/review-worker.ts' },
  outdir: 'dist/bin',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  external,
  sourcemap: true,
  logLevel: 'warning',
});

// The content of the build names it: `staticsite validate` keys what it remembers of CRDs by it, so a
// new engine never reads an older one's verdicts (cli/validate/crd-cache.ts).
const hash = createHash('sha256');
for (const file of readdirSync(join(root, 'dist/bin'))
  .filter((f) => f.endsWith('.js'))
  .sort()) {
  hash.update(file).update(readFileSync(join(root, 'dist/bin', file)));
}
writeFileSync(join(root, 'dist/bin', BUILD_ID_FILE), `${hash.digest('hex')}\n`);

// The commit this build comes from, for `staticsite --version` (cli/build-commit.ts).
writeFileSync(join(root, 'dist/bin', COMMIT_FILE), `${sourceCommit(root)}\n`);
