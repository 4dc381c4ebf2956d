/**
 * The environment variable the development environment's process runner (devenv/managed-process.ts)
 * sets to its own pid: a process started that way ends when that parent is gone, however it went
 * (SIGKILL included), instead of running on as an orphan. Unset, as in a pod or a user's shell,
 * nothing is watched.
 */
export const PARENT_PID_VARIABLE = 'STATICSITE_PARENT_PID';

/**
 * Polls the parent pid (once a second, without holding the process open): once the process is
 * re-parented, `onGone` runs once (the entry point sends itself SIGTERM, the graceful path).
 */
export function watchParent(
  env: NodeJS.ProcessEnv,
  currentParent: () => number,
  onGone: () => void,
  intervalMs = 1000,
): void {
  const parent = Number(env[PARENT_PID_VARIABLE]);
  if (!Number.isInteger(parent) || parent <= 1) return;
  const timer = setInterval(() => {
    if (currentParent() === parent) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
}
