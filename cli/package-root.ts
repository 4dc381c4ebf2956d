import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'staticsite-operator';

/**
 * The directory of this package's package.json, found by walking up from this module: the same
 * answer whether the code runs from source (`cli/`), from the build (`dist/cli/`) or from the CLI
 * bundle (`dist/bin/`). `staticsite --version` reads the version there; the development environment
 * (devenv/) finds its files there.
 */
export function packageRoot(from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === PACKAGE_NAME
    ) {
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json of ${PACKAGE_NAME} above ${from}`);
    dir = parent;
  }
}

/** A file the development environment needs from the package (build script, manifests, corpus): it must exist. */
export function packageFile(...parts: string[]): string {
  const path = join(packageRoot(), ...parts);
  if (!existsSync(path)) {
    throw new Error(
      `${join(...parts)} is missing from ${packageRoot()}: this command runs from a checkout of staticsite-operator`,
    );
  }
  return path;
}
