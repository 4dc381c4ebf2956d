import { type Logger, pino } from 'pino';

export type { Logger } from 'pino';

/** Structured JSON logs on stdout; `silent` for tests. */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { component: 'staticsite-controller' } });
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
