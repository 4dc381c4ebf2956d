/**
 * A checker for the recorded history of fault-injection tests: pure functions over what the replicas'
 * recording proxies saw (controller-api-proxy.ts) and what the test gathered at the end.
 */
export { type ApiPath, isLeasePath, parseApiPath } from './api-path.ts';
export { checkHistory, type Expectations } from './check.ts';
export { convergedWithin } from './convergence.ts';
export { converged, hostnamesUnique, noStuckFinalizers, recordsConsistent } from './final-state.ts';
export { formatViolations } from './format.ts';
export { historyFromProxies } from './from-proxies.ts';
export { type LeadershipWindow, leadershipWindows } from './leadership-windows.ts';
export { isAccepted, isMutating } from './requests.ts';
export {
  overlappingSiteWrites,
  type SiteWriteOptions,
  type SiteWriteSpan,
  siteWriteSpans,
  siteWritten,
} from './site-writes.ts';
export type {
  ConvergenceSample,
  FinalRecord,
  FinalSite,
  FinalState,
  History,
  RecordedRequest,
  ReplicaHistory,
  RuleName,
  Violation,
} from './types.ts';
export { siteKeyOf } from './types.ts';
export { type LeadershipExpectation, writesOutsideLeadership } from './writes-outside-leadership.ts';
