import { readFileSync } from 'node:fs';

/**
 * The file beside the bundled CLI naming the commit it was built from: 40 hex digits, with
 * `-dirty` when tracked files differed from that commit, or `unknown` (no git at build time). The
 * build (devenv/build/bundle-cli.ts) writes it; `staticsite --version` prints it.
 */
export const COMMIT_FILE = 'commit.txt';

/** The commit the CLI at `moduleUrl` was built from: `unknown` from source or without the file. */
export function buildCommit(moduleUrl: string): string {
  try {
    return readFileSync(new URL(COMMIT_FILE, moduleUrl), 'utf8').trim() || 'unknown';
  } catch {
    return 'unknown';
  }
}
