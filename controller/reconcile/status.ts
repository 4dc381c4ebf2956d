import type { Condition, ConditionStatus, StaticSiteStatus, StaticSiteV1 } from '../../api/index.ts';
import { jsonEqual } from '../../crd/json-value.ts';
import type { Deployment } from '../../kube/objects.ts';

export const READY = 'Ready';
export const PROGRESSING = 'Progressing';
export const DEGRADED = 'Degraded';

/**
 * Why a step of the pass keeps a site from Ready. The children's reasons (the Deployment's rollout,
 * a route, an Ingress) are their readiness hooks' (ChildKind.readiness, reconcile/children.ts).
 */
export type StepReason = 'ChildConflict' | 'ChildFailed' | 'RecordFailed' | 'HostnameConflict' | 'ClaimFailed';

/** Ready's status, reason and message. */
export interface Readiness {
  status: ConditionStatus;
  reason: string;
  message: string;
  /** Not Ready because something is under way (Progressing=True), not because something stops it (Degraded=True). */
  progressing?: boolean;
}

/** kubectl's deploymentutil.TimedOutReason. */
const TIMED_OUT_REASON = 'ProgressDeadlineExceeded';

/**
 * The Deployment's rollout as `kubectl rollout status` reports it (k8s.io/kubectl
 * pkg/polymorphichelpers/rollout_status.go, DeploymentStatusViewer.Status), with kubectl's
 * sentences as messages, without the trailing newline.
 */
export function deploymentReadiness(deployment: Deployment): Readiness {
  const name = deployment.metadata.name ?? '';
  const generation = deployment.metadata.generation ?? 0;
  const status = deployment.status ?? {};
  if (generation > (status.observedGeneration ?? 0)) {
    return {
      status: 'False',
      reason: 'RollingOut',
      message: 'Waiting for deployment spec update to be observed...',
      progressing: true,
    };
  }
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.reason === TIMED_OUT_REASON) {
    return {
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: `deployment "${name}" exceeded its progress deadline`,
    };
  }
  const updated = status.updatedReplicas ?? 0;
  const replicas = deployment.spec?.replicas;
  if (replicas !== undefined && updated < replicas) {
    return {
      status: 'False',
      reason: 'RollingOut',
      message: `Waiting for deployment "${name}" rollout to finish: ${updated} out of ${replicas} new replicas have been updated...`,
      progressing: true,
    };
  }
  const total = status.replicas ?? 0;
  if (total > updated) {
    return {
      status: 'False',
      reason: 'RollingOut',
      message: `Waiting for deployment "${name}" rollout to finish: ${total - updated} old replicas are pending termination...`,
      progressing: true,
    };
  }
  const available = status.availableReplicas ?? 0;
  if (available < updated) {
    return {
      status: 'False',
      reason: 'PodsNotReady',
      message: `Waiting for deployment "${name}" rollout to finish: ${available} of ${updated} updated replicas are available...`,
      progressing: true,
    };
  }
  return { status: 'True', reason: 'Available', message: `deployment "${name}" successfully rolled out` };
}

export interface StatusInput {
  site: StaticSiteV1;
  /** What the children's readiness hooks say (reconcile/readiness.ts): Ready, and the ready replicas. */
  children: { readiness: Readiness; readyReplicas: number };
  /** A problem of a step that overrides the children's word (a conflicting child, a failed record). */
  problem?: Readiness;
  /** Where the site is served; absent while it cannot be reached by that name (a route not accepted). */
  url: string | undefined;
  /** metav1.Time of now, used only when the Ready condition flips. */
  now: string;
}

/**
 * The status the site should have. `observedGeneration` advances to `metadata.generation` only
 * once that generation is fully converged (Ready=True); until then it keeps its previous value, so
 * `generation > observedGeneration` means "this spec is not live yet". Each condition's
 * lastTransitionTime changes only when its status flips. The conditions: Ready (the site serves
 * this generation), Progressing (its rollout is under way) and Degraded (something stops it:
 * ProgressDeadlineExceeded, a child or record failure, a hostname conflict), as docs/controller.md
 * describes them.
 */
export function desiredStatus({ site, children, problem, url, now }: StatusInput): StaticSiteStatus {
  const generation = site.metadata.generation ?? 0;
  const readiness: Readiness = problem ?? children.readiness;
  const condition = (type: string, status: ConditionStatus, reason: string, message: string): Condition => {
    const previous = site.status?.conditions?.find((c) => c.type === type);
    return {
      type,
      status,
      observedGeneration: generation,
      lastTransitionTime:
        previous && previous.status === status && previous.lastTransitionTime ? previous.lastTransitionTime : now,
      reason,
      message,
    };
  };
  const inProgress = readiness.status === 'False' && readiness.progressing === true;
  const degraded = readiness.status === 'False' && !inProgress;
  const status: StaticSiteStatus = {};
  const previousObserved = site.status?.observedGeneration;
  if (readiness.status === 'True') status.observedGeneration = generation;
  else if (previousObserved !== undefined) status.observedGeneration = Math.min(previousObserved, generation);
  status.readyReplicas = children.readyReplicas;
  if (url !== undefined) status.url = url;
  status.conditions = [
    condition(READY, readiness.status, readiness.reason, readiness.message),
    // Progressing: this generation's rollout is under way; False once it is done or stuck, with why.
    condition(PROGRESSING, inProgress ? 'True' : 'False', readiness.reason, readiness.message),
    // Degraded: something stops the site from converging (a stuck rollout, a child or record failure).
    degraded
      ? condition(DEGRADED, 'True', readiness.reason, readiness.message)
      : condition(DEGRADED, 'False', 'AsExpected', ''),
  ];
  return status;
}

/** True when writing `next` would change nothing. */
export function statusUnchanged(current: StaticSiteStatus | undefined, next: StaticSiteStatus): boolean {
  return jsonEqual(current ?? {}, next);
}
