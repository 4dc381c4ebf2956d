import { readdir, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { InputError } from './documents.ts';

/** The files a directory contributes, as kubeconform and kubectl-validate take them. */
export const MANIFEST_EXTENSIONS: readonly string[] = ['.yaml', '.yml', '.json'];

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await filesUnder(path)));
    else if (entry.isFile() && MANIFEST_EXTENSIONS.includes(extname(entry.name).toLowerCase())) files.push(path);
  }
  return files;
}

/**
 * The inputs of PATH...: `-` (standard input) and files as given, directories walked recursively
 * for `.yaml`, `.yml` and `.json` files in name order. A path that does not exist is an input error.
 */
export async function expandPaths(paths: readonly string[]): Promise<string[]> {
  const inputs: string[] = [];
  for (const path of paths) {
    if (path === '-') {
      inputs.push(path);
      continue;
    }
    const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
      throw new InputError(`${path}: cannot read file (${error.code ?? error.message})`);
    });
    inputs.push(...(info.isDirectory() ? await filesUnder(path) : [path]));
  }
  return inputs;
}
