/**
 * Node's module compile cache for the CLI: the V8 code of the bundle's modules, kept on disk under the
 * user's cache directory. Node keys each entry by the module's content and tags the directory with its
 * own version and V8's flags, and V8 refuses code that does not match its checks: a stale or damaged
 * entry is compiled again, an unwritable directory leaves the cache off. Nothing here can change what
 * a command does, only how long it takes to start.
 */
import { userCacheDir } from './cache-home.ts';

/** NODE_COMPILE_CACHE when the user set it, else the user's cache directory. */
export function compileCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.NODE_COMPILE_CACHE || userCacheDir('compile', env);
}

/** Turns the cache on with module.enableCompileCache (absent on a Node without it). */
export function enableCompileCache(
  enable: ((directory?: string) => unknown) | undefined,
  env: NodeJS.ProcessEnv = process.env,
): void {
  try {
    enable?.(compileCacheDir(env));
  } catch {
    // a cache that cannot be turned on is only slower
  }
}
