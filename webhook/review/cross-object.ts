/**
 * The steps of the pipeline that read other objects, in one ordered list: they run where the
 * watch-backed indexes live (the main thread), after the decision, whichever thread decided it.
 */
import { GROUP, KIND } from '../../api/index.ts';
import { fieldErrors, invalidMessage } from '../../crd/index.ts';
import type { HostnameIndex } from '../admission/hostname-index.ts';
import { denied } from '../admission/responses.ts';
import type { AdmissionResponse } from '../admission/review.ts';
import { type ShardAssigner, type ShardRequest, withShardLabel } from '../admission/shard-label.ts';

/** The hostname a write that passed the schema claims: the cross-object rule decides it where the index is. */
export interface HostnameClaim {
  hostname: string;
  namespace: string;
  name: string;
}

/** An admission response, and the facts the cross-object steps read. */
export interface Verdict {
  response: AdmissionResponse;
  /** The hostname an allowed write claims (validating reviews). */
  claim?: HostnameClaim;
  /** A mutated StaticSite without a shard label (mutating reviews). */
  shard?: ShardRequest;
}

/** One cross-object step: the verdict as it stands, or a new one. */
export type CrossObjectStep = <V extends Verdict>(verdict: V) => V;

/**
 * The rule no schema can express: a hostname is held by one StaticSite in the whole cluster. The
 * denial of a write whose claim another site holds, or undefined when the claim is free.
 */
export function hostnameConflict(
  claim: HostnameClaim,
  hostnames: HostnameIndex,
  allowedResponse: AdmissionResponse,
): AdmissionResponse | undefined {
  const { hostname, namespace, name } = claim;
  const taken = hostnames.holders(hostname).some((h) => h.namespace !== namespace || h.name !== name);
  if (!taken) return undefined;
  const error = fieldErrors.duplicate('spec.hostname', hostname);
  return denied(
    allowedResponse.uid,
    {
      code: 422,
      reason: 'Invalid',
      message: invalidMessage(`${KIND}.${GROUP}`, name, [error]),
      details: {
        name,
        group: GROUP,
        kind: KIND,
        causes: [{ reason: error.type, message: error.errorBody(), field: error.field }],
      },
    },
    allowedResponse.warnings ?? [],
  );
}

/** The unique-hostname rule: a write whose claim another site holds is denied (422, as the API server words it). */
export function uniqueHostnameStep(hostnames: HostnameIndex): CrossObjectStep {
  return (verdict) => {
    if (verdict.claim === undefined) return verdict;
    const conflict = hostnameConflict(verdict.claim, hostnames, verdict.response);
    return conflict === undefined ? verdict : { ...verdict, response: conflict, claim: undefined };
  };
}

/** The sharded controllers' ring: a mutated StaticSite without a shard label gets one while a shard is live. */
export function shardLabelStep(shards: ShardAssigner): CrossObjectStep {
  return (verdict) => {
    if (verdict.shard === undefined || !verdict.response.allowed) return verdict;
    const shard = shards.shardFor(verdict.shard.key);
    if (shard === undefined) return verdict;
    return { ...verdict, response: withShardLabel(verdict.response, verdict.shard, shard), shard: undefined };
  };
}

export interface CrossObjectSources {
  /** The other StaticSites' hostnames (none: standalone, the unique-hostname rule is off). */
  hostnames?: HostnameIndex;
  /** The sharded controllers' ring (none: sites get no shard label). */
  shards?: ShardAssigner;
}

/** The steps, in the order they run: the hostname rule, then the shard label. */
export function crossObjectSteps(sources: CrossObjectSources): CrossObjectStep[] {
  const steps: CrossObjectStep[] = [];
  if (sources.hostnames) steps.push(uniqueHostnameStep(sources.hostnames));
  if (sources.shards) steps.push(shardLabelStep(sources.shards));
  return steps;
}

/** The verdict after every step. */
export function applySteps<V extends Verdict>(steps: readonly CrossObjectStep[], verdict: V): V {
  let current = verdict;
  for (const step of steps) current = step(current);
  return current;
}
