/**
 * One request a replica sent, as its recording proxy saw it: a structural subset of ProxiedRequest
 * (test/support/controller-api-proxy.ts), so made-up histories are plain objects.
 */
export interface RecordedRequest {
  method: string;
  /** The URL path, without the query. */
  path: string;
  /** The API server's status code; 0 when it never answered. */
  status: number;
  /** When the proxy received it (ms, Date.now()). */
  at: number;
  /** When the API server answered; absent if it never did. */
  answeredAt?: number;
  /** The object's name. */
  name?: string;
  /** For a Lease write: the body's spec.holderIdentity ('' for a release). */
  holder?: string;
  /** For a Lease write: the Lease's name. */
  leaseName?: string;
  /** For a Lease write: the spec.leaseDurationSeconds it sets. */
  leaseDurationSeconds?: number;
  watch?: boolean;
  /** Sent with `dryRun`: the server changed nothing. */
  dryRun?: boolean;
}

export interface ReplicaHistory {
  /** The controller's identity: the holderIdentity it writes into Leases. */
  identity: string;
  requests: readonly RecordedRequest[];
}

/** What a fault-injection test observed: every replica's requests, and what it gathered at the end. */
export interface History {
  replicas: readonly ReplicaHistory[];
  /** The cluster and the record store after the faults, for the final-state rules. */
  final?: FinalState;
  /** When each fault stopped and when convergence was first seen after it. */
  convergence?: readonly ConvergenceSample[];
}

export type RuleName =
  | 'writesOutsideLeadership'
  | 'overlappingSiteWrites'
  | 'recordsConsistent'
  | 'noStuckFinalizers'
  | 'hostnamesUnique'
  | 'converged'
  | 'convergedWithin';

export interface Violation {
  rule: RuleName;
  replica?: string;
  detail: string;
}

/** A StaticSite as the test read it at the end. */
export interface FinalSite {
  namespace: string;
  name: string;
  generation: number;
  deletionTimestamp?: string;
  finalizers: readonly string[];
  /** spec.hostname. */
  hostname: string;
  /** The Ready condition's observedGeneration and status, if it has one. */
  readyObservedGeneration?: number;
  readyStatus?: string;
  /** The Ready condition's reason, for messages. */
  readyReason?: string;
}

/** One external record in the record store. */
export interface FinalRecord {
  /** `namespace/name` of the site it was published for. */
  siteKey: string;
  hostname: string;
}

export interface FinalState {
  sites: readonly FinalSite[];
  records: readonly FinalRecord[];
  /** `namespace/name` of every site the test deleted. */
  deletedSites: readonly string[];
}

export interface ConvergenceSample {
  /** What the fault was, for the message. */
  label: string;
  faultsStoppedAt: number;
  /** Absent: convergence was never observed. */
  convergedAt?: number;
}

export function siteKeyOf(site: Pick<FinalSite, 'namespace' | 'name'>): string {
  return `${site.namespace}/${site.name}`;
}
