import { type StaticSiteV1, siteHostname } from '../../api/index.ts';
import type { Ingress } from '../../kube/objects.ts';
import { INGRESSES } from '../../kube/resources.ts';
import type { ServingAddress } from '../records/record-store.ts';
import { type ChildKind, childName, HTTP_PORT, mutateMetadata, notReady } from './children.ts';
import type { Readiness } from './status.ts';

/**
 * The Ingress child (`--ingress-class NAME`): the site's hostname, every path to the site's Service,
 * for the ingress controller of that class. Nothing in it is defaulted by the API server (the path
 * type is set), so the stored Ingress equals what this builder makes. The site is reachable by its
 * hostname, and the record points at the Ingress's addresses, once its ingress controller reports them.
 */
export function ingressChild(className: string, baseDomain: string): ChildKind<Ingress> {
  return {
    type: INGRESSES,
    mutate(object, site: StaticSiteV1) {
      mutateMetadata(object, site);
      object.spec ??= {};
      object.spec.ingressClassName = className;
      object.spec.rules = [
        {
          host: siteHostname(site, baseDomain),
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: childName(site), port: { number: HTTP_PORT } } },
              },
            ],
          },
        },
      ];
    },
    readiness(ingress, site) {
      const pending = ingressReadiness(ingress, className);
      if (pending) return notReady(pending, { unreachable: true });
      const name = `${site.metadata.namespace}/${childName(site)}`;
      return { ready: true, via: { kind: 'Ingress', name, addresses: ingressAddresses(ingress) } };
    },
  };
}

/** The addresses the ingress controller reports in `status.loadBalancer.ingress`, as record targets. */
export function ingressAddresses(ingress: Ingress | undefined): ServingAddress[] {
  return (ingress?.status?.loadBalancer?.ingress ?? []).flatMap((entry) => [
    ...(entry.ip ? [{ type: 'IPAddress', value: entry.ip }] : []),
    ...(entry.hostname ? [{ type: 'Hostname', value: entry.hostname }] : []),
  ]);
}

/**
 * Whether the Ingress serves the site: an Ingress has no conditions, so, as kubectl and ExternalDNS
 * read it, once its ingress controller reports where it serves it (`status.loadBalancer.ingress`).
 * Undefined then; otherwise why the site is not reachable by its hostname yet (in progress).
 */
export function ingressReadiness(ingress: Ingress | undefined, className: string): Readiness | undefined {
  if (!ingress) {
    return {
      status: 'False',
      reason: 'IngressPending',
      message: 'Waiting for Ingress to be created...',
      progressing: true,
    };
  }
  if (ingressAddresses(ingress).length > 0) return undefined;
  return {
    status: 'False',
    reason: 'IngressPending',
    message: `Waiting for the ingress controller of class "${className}" to report an address for Ingress "${ingress.metadata.name ?? ''}"...`,
    progressing: true,
  };
}
