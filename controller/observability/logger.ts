import { type Logger, pino } from 'pino';
import { createProcessLogger, type LogContext } from '../../observability/process-logger.ts';

export type { Logger } from 'pino';

/** The controller's JSON log on stdout (observability/process-logger.ts); a reconcile's lines carry its ID. */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info', context?: LogContext): Logger {
  return createProcessLogger('staticsite-controller', level, { context });
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
