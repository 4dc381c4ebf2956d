/**
 * Test doubles for code built on kube/: clocks that move only when told to (or by themselves), an
 * in-memory API server behind the KubeTransport seam, and the patch semantics it applies. For
 * tests and other `testing` modules only; production code never imports them (test/unit/layout.test.ts).
 */

export { FakeApiServer, type Fault, type RecordedRequest } from './fake-api-server.ts';
export { AutoAdvancingClock, type Instant, ManualClock } from './manual-clock.ts';
export { applyJsonPatch, applyMergePatch } from './patches.ts';
export { settle } from './settle.ts';
