import { convergedWithin } from './convergence.ts';
import { converged, hostnamesUnique, noStuckFinalizers, recordsConsistent } from './final-state.ts';
import { overlappingSiteWrites, type SiteWriteOptions } from './site-writes.ts';
import type { History, Violation } from './types.ts';
import { type LeadershipExpectation, writesOutsideLeadership } from './writes-outside-leadership.ts';

export interface Expectations {
  /** Which Lease fences each write (`leaseFor: () => undefined` checks none). */
  leadership: LeadershipExpectation;
  siteWrites?: SiteWriteOptions;
  /** The bound for history.convergence; required when the history has samples. */
  convergenceBoundMs?: number;
}

/** Every rule that applies: the request rules always, the final-state and convergence rules when the history has them. */
export function checkHistory(history: History, expectations: Expectations): Violation[] {
  const violations = [
    ...writesOutsideLeadership(history, expectations.leadership),
    ...overlappingSiteWrites(history, expectations.siteWrites),
  ];
  const final = history.final;
  if (final) {
    violations.push(...recordsConsistent(final), ...noStuckFinalizers(final), ...hostnamesUnique(final));
    violations.push(...converged(final));
  }
  if (history.convergence) {
    if (expectations.convergenceBoundMs === undefined) {
      throw new Error('the history has convergence samples: give expectations.convergenceBoundMs');
    }
    violations.push(...convergedWithin(history.convergence, expectations.convergenceBoundMs));
  }
  return violations;
}
