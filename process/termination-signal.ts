/** An AbortSignal that aborts on the first SIGTERM or SIGINT: how a command that runs on learns to stop. */
export function terminationSignal(): AbortSignal {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return controller.signal;
}
