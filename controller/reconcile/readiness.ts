import type { StaticSiteV1 } from '../../api/index.ts';
import type { KubeObject } from '../../kube/objects.ts';
import type { ServedVia } from '../records/record-store.ts';
import type { ChildKind, ChildReadiness, ReadinessContext } from './children.ts';
import type { Readiness } from './status.ts';

/** What the children say of their site, every registered kind's readiness hook asked in registry order. */
export interface ChildrenReadiness {
  /** Ready as the children have it (a problem of a step of the pass goes before it). */
  readiness: Readiness;
  /** No child says the hostname does not reach the site: status shows the URL, and the record may be published. */
  reachable: boolean;
  /** What serves the site by its hostname (the first ready child to say), where the record points. */
  via?: ServedVia;
  /** `status.readyReplicas`: the first child to give it, else 0. */
  readyReplicas: number;
}

/** Ready=True when every child is, and none has the say on why (a registry without the Deployment). */
const ALL_READY: Readiness = { status: 'True', reason: 'Available', message: 'every child is ready' };

/**
 * Asks each kind's readiness hook about its child in `objects` (by kind; absent: undefined). Ready is
 * False with the first child not ready that is `unreachable`, else with the first other child not
 * ready, else True with the first ready child's reason and message (ChildReadiness).
 */
export function childrenReadiness(
  kinds: readonly ChildKind[],
  objects: ReadonlyMap<string, KubeObject>,
  site: StaticSiteV1,
  context: ReadinessContext,
): ChildrenReadiness {
  const answers: ChildReadiness[] = kinds.flatMap((kind) =>
    kind.readiness ? [kind.readiness(objects.get(kind.type.kind), site, context)] : [],
  );
  const notReady = answers.flatMap((a) => (a.ready ? [] : [a]));
  const unreachable = notReady.filter((a) => a.unreachable);
  const first = unreachable[0] ?? notReady[0];
  const ready = answers.flatMap((a) => (a.ready ? [a] : []));
  const said = ready.find((a) => a.reason !== undefined);
  let readiness = ALL_READY;
  if (first) {
    const { reason, message, progressing } = first;
    readiness = { status: 'False', reason, message, ...(progressing && { progressing }) };
  } else if (said) {
    readiness = { status: 'True', reason: said.reason ?? '', message: said.message ?? '' };
  }
  const via = ready.find((a) => a.via)?.via;
  return {
    readiness,
    reachable: unreachable.length === 0,
    ...(via && { via }),
    readyReplicas: answers.find((a) => a.readyReplicas !== undefined)?.readyReplicas ?? 0,
  };
}
