/** A mistake in how the command was called: printed as one line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface CommandIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /**
   * Resolves once what was written to stdout has left the process (a pipe to a slower reader
   * queues it in memory otherwise); commands that write without bound wait on it now and then.
   */
  stdoutDrained?: () => Promise<void>;
}

export type Command = (args: string[], io: CommandIO) => Promise<number>;
