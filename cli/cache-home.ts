import { homedir } from 'node:os';
import { join } from 'node:path';

/** $XDG_CACHE_HOME/staticsite/<name>, else ~/.cache/staticsite/<name>: where the CLI keeps what it may forget. */
export function userCacheDir(name: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'staticsite', name);
}
