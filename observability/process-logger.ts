import type { AsyncLocalStorage } from 'node:async_hooks';
import { type DestinationStream, type Logger, pino } from 'pino';

/** Fields every log line of the current asynchronous context carries (a reconcile's ID and object). */
export type LogContext = AsyncLocalStorage<Record<string, string>>;

/** The levels `--log-level` takes, as pino (and zap, which controller-runtime uses) name them. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

export function isLogLevel(level: string): boolean {
  return (LOG_LEVELS as readonly string[]).includes(level);
}

/**
 * The JSON log of each process: one line per event, `level` as a word ("info", "error") as
 * controller-runtime's zap writes it, `time` in ISO 8601, `component` naming the process
 * (staticsite-webhook, staticsite-controller, staticsite-certs), and the fields of the current
 * LogContext.
 */
export function createProcessLogger(
  component: string,
  level: string,
  options: { destination?: DestinationStream; context?: LogContext } = {},
): Logger {
  const context = options.context;
  return pino(
    {
      level,
      base: { component },
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
      ...(context && { mixin: () => context.getStore() ?? {} }),
    },
    options.destination,
  );
}

/** Why `--log-level` is refused, or undefined when it is a level. */
export function logLevelProblem(level: string): string | undefined {
  return isLogLevel(level)
    ? undefined
    : `--log-level must be one of ${LOG_LEVELS.join(', ')}, not ${JSON.stringify(level)}`;
}
