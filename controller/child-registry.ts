import type { KubeObject } from '../kube/objects.ts';
import { type ChildKind, configMapChild, deploymentChild, INSTANCE_LABEL, serviceChild } from './reconcile/children.ts';
import { ingressChild } from './reconcile/ingress.ts';
import { ownerKey } from './reconcile/ownership.ts';
import { type GatewayRef, httpRouteChild } from './reconcile/route.ts';

export type { ChildKind } from './reconcile/children.ts';

/**
 * The child registry: every kind of object a StaticSite owns, one entry each, as controller-runtime's
 * `Owns()` lines. Each entry drives
 * - an informer of that kind, labelled `app.kubernetes.io/managed-by=staticsite-controller`
 *   (ControllerManager), named after its plural (`/readyz` check `informer-<plural>`);
 * - the event handler that queues the owning site of a changed child (EventHandlers, through `owner`);
 * - ensure-with-mutate, in this order, on every reconcile (SiteReconciler, through `mutate` and `differs`);
 * - the RBAC the controller needs and asks for at start-up (controller/rbac.ts, startup-checks.ts);
 * - its say in the site's Ready, `status.url` and external record (SiteReconciler, through `readiness`).
 * An `unserved` entry (its API is not served) gets only the last.
 * Adding a child kind is one entry here plus its builder (reconcile/children.ts).
 */
export type ChildRegistry = readonly ChildKind[];

export const CHILDREN: ChildRegistry = [configMapChild, deploymentChild, serviceChild];

/**
 * The registry a controller runs with: CHILDREN, plus an HTTPRoute to `gateway` when `--gateway` is set
 * (an `unserved` entry, which only says every site's Ready, when the cluster has no Gateway API), or an
 * Ingress of `ingressClass` with `--ingress-class` (docs/exposing-sites.md).
 */
export function childRegistry(
  gateway: { ref: GatewayRef; served: boolean } | undefined,
  baseDomain: string,
  ingressClass?: string,
): ChildRegistry {
  if (gateway?.served) return [...CHILDREN, httpRouteChild(gateway.ref, baseDomain) as ChildKind];
  if (ingressClass) return [...CHILDREN, ingressChild(ingressClass, baseDomain) as ChildKind];
  if (gateway) return [...CHILDREN, httpRouteChild(gateway.ref, baseDomain, false) as ChildKind];
  return CHILDREN;
}

/** The entries whose API the cluster serves: those watched, ensured and granted. */
export function servedKinds(children: ChildRegistry): ChildRegistry {
  return children.filter((kind) => !kind.unserved);
}

/** What the controller does to every child kind: list and watch it, create and update it, get it on a 409. */
export const CHILD_VERBS = ['get', 'list', 'watch', 'create', 'update'] as const;

/** The site a child belongs to: its controller ownerReference, else its instance label. */
export function ownerSiteKey(object: KubeObject): string | undefined {
  const instance = object.metadata.labels?.[INSTANCE_LABEL];
  return (
    ownerKey(object) ?? (instance && object.metadata.namespace ? `${object.metadata.namespace}/${instance}` : undefined)
  );
}

/** The key of the site an event on `object` (a child of this kind) queues. */
export function childOwner(kind: ChildKind, object: KubeObject): string | undefined {
  return kind.owner ? kind.owner(object) : ownerSiteKey(object);
}
