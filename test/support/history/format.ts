import type { Violation } from './types.ts';

/** The violations, one a line, for an assertion message. */
export function formatViolations(violations: readonly Violation[]): string {
  if (violations.length === 0) return 'no violations';
  const lines = violations.map((v) => `  - ${v.rule}${v.replica === undefined ? '' : ` [${v.replica}]`}: ${v.detail}`);
  return `${violations.length} violation${violations.length === 1 ? '' : 's'}:\n${lines.join('\n')}`;
}
