import { type StaticSiteV1, siteHostname } from '../../api/index.ts';
import type { Gateway, HTTPRoute, ParentReference } from '../../kube/objects.ts';
import { HTTPROUTES } from '../../kube/resources.ts';
import type { ServingAddress } from '../records/record-store.ts';
import { type ChildKind, childName, HTTP_PORT, mutateMetadata, notReady } from './children.ts';
import type { Readiness } from './status.ts';

export const GATEWAY_API_GROUP = 'gateway.networking.k8s.io';

/** The Gateway every site's route attaches to: `--gateway NAMESPACE/NAME`, optionally one listener of it. */
export interface GatewayRef {
  namespace: string;
  name: string;
  /** `--gateway-section`: the listener (Gateway API sectionName) the routes attach to. */
  sectionName?: string;
}

/** `NAMESPACE/NAME` as a GatewayRef; throws an Error saying what is wrong. */
export function parseGatewayRef(text: string, sectionName?: string): GatewayRef {
  const parts = text.split('/');
  if (parts.length !== 2 || !parts[0] || !parts[1]) {
    throw new Error(
      `--gateway wants NAMESPACE/NAME (the Gateway the sites' routes attach to), not ${JSON.stringify(text)}`,
    );
  }
  return { namespace: parts[0], name: parts[1], ...(sectionName && { sectionName }) };
}

export function describeGateway(gateway: GatewayRef): string {
  const section = gateway.sectionName ? ` (listener ${gateway.sectionName})` : '';
  return `Gateway ${gateway.namespace}/${gateway.name}${section}`;
}

function parentRefOf(gateway: GatewayRef): ParentReference {
  return {
    group: GATEWAY_API_GROUP,
    kind: 'Gateway',
    namespace: gateway.namespace,
    name: gateway.name,
    ...(gateway.sectionName && { sectionName: gateway.sectionName }),
  };
}

/** No route (not created yet, another controller's, or its write failed): waiting for it. */
const ROUTE_NOT_CREATED: Readiness = {
  status: 'False',
  reason: 'RoutePending',
  message: 'Waiting for HTTPRoute to be created...',
  progressing: true,
};

/**
 * The HTTPRoute child: the site's hostname, attached to the Gateway, every path to the site's Service.
 * Every field the CRD would default is written as its default, so the stored route equals what this
 * builder makes and a settled site writes nothing. The site is reachable by its hostname, and the
 * record points at the Gateway's addresses, once the Gateway accepted the route. `served` false: the
 * cluster has no HTTPRoute API (found at start-up), so there is no route, and every site says so.
 */
export function httpRouteChild(gateway: GatewayRef, baseDomain: string, served = true): ChildKind<HTTPRoute> {
  const kind: ChildKind<HTTPRoute> = {
    type: HTTPROUTES,
    mutate(object, site: StaticSiteV1) {
      mutateMetadata(object, site);
      object.spec ??= {};
      object.spec.parentRefs = [parentRefOf(gateway)];
      object.spec.hostnames = [siteHostname(site, baseDomain)];
      object.spec.rules = [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          backendRefs: [{ group: '', kind: 'Service', name: childName(site), port: HTTP_PORT, weight: 1 }],
        },
      ];
    },
    readiness(route, _site, context) {
      const pending = route ? routeReadiness(route, gateway) : ROUTE_NOT_CREATED;
      if (pending) return notReady(pending, { unreachable: true });
      const name = `${gateway.namespace}/${gateway.name}`;
      return { ready: true, via: { kind: 'Gateway', name, addresses: gatewayAddresses(context.gateways?.get(name)) } };
    },
  };
  if (served) return kind;
  return { ...kind, unserved: true, readiness: () => notReady(gatewayApiMissing(gateway), { unreachable: true }) };
}

/** `--gateway` on a cluster that serves no HTTPRoute: why no site is reachable by its hostname, and the fix. */
export function gatewayApiMissing(gateway: GatewayRef): Readiness {
  return {
    status: 'False',
    reason: 'GatewayAPIMissing',
    message: `the cluster serves no Gateway API HTTPRoute (${HTTPROUTES.group}/${HTTPROUTES.version}): no route to ${describeGateway(gateway)}; install the Gateway API CRDs and restart the controller`,
  };
}

/** Whether a route status entry is about `gateway`, with the defaults of a parentRef filled in. */
function isParent(ref: ParentReference, gateway: GatewayRef, routeNamespace: string | undefined): boolean {
  return (
    (ref.group ?? GATEWAY_API_GROUP) === GATEWAY_API_GROUP &&
    (ref.kind ?? 'Gateway') === 'Gateway' &&
    (ref.namespace ?? routeNamespace) === gateway.namespace &&
    ref.name === gateway.name &&
    (ref.sectionName ?? undefined) === gateway.sectionName
  );
}

/**
 * What the Gateway said of the route (its status.parents entry): undefined once it is Accepted and its
 * references resolved for the route's current generation; otherwise why the site is not reachable by
 * its hostname (in progress while the Gateway has not said). A condition of an older generation counts
 * as not given yet.
 */
export function routeReadiness(route: HTTPRoute, gateway: GatewayRef): Readiness | undefined {
  const name = route.metadata.name ?? '';
  const generation = route.metadata.generation ?? 0;
  const parent = route.status?.parents?.find((p) => isParent(p.parentRef, gateway, route.metadata.namespace));
  const current = (type: string) =>
    parent?.conditions?.find((c) => c.type === type && (c.observedGeneration ?? generation) >= generation);
  const accepted = current('Accepted');
  const resolved = current('ResolvedRefs');
  const waiting = (what: string): Readiness => ({
    status: 'False',
    reason: 'RoutePending',
    message: `Waiting for ${describeGateway(gateway)} to ${what} HTTPRoute "${name}"...`,
    progressing: true,
  });
  if (!accepted) return waiting('accept');
  if (accepted.status !== 'True') {
    return {
      status: 'False',
      reason: 'RouteNotAccepted',
      message: `HTTPRoute "${name}" is not accepted by ${describeGateway(gateway)}: ${accepted.reason ?? ''}: ${accepted.message ?? ''}`,
    };
  }
  if (!resolved) return waiting('resolve the references of');
  if (resolved.status !== 'True') {
    return {
      status: 'False',
      reason: 'RouteRefsNotResolved',
      message: `${describeGateway(gateway)} cannot resolve the references of HTTPRoute "${name}": ${resolved.reason ?? ''}: ${resolved.message ?? ''}`,
    };
  }
  return undefined;
}

/** A Gateway's `status.addresses` as record targets (an address without a type is an IPAddress, the API's default). */
export function gatewayAddresses(gateway: Gateway | undefined): ServingAddress[] {
  return (gateway?.status?.addresses ?? []).map((a) => ({ type: a.type ?? 'IPAddress', value: a.value }));
}
