import { STATICSITES } from '../api/index.ts';
import { EVENTS, GATEWAYS, type ResourceType } from '../kube/resources.ts';
import { CHILD_VERBS, CHILDREN, type ChildRegistry, servedKinds } from './child-registry.ts';

export type { ChildRegistry } from './child-registry.ts';

/** One permission, as a SelfSubjectAccessReview asks for it. */
export interface Permission {
  verb: string;
  type: ResourceType;
  subresource?: string;
  /** One object's name, where the role names it. */
  name?: string;
  /** '' for all namespaces. */
  namespace: string;
}

/** An rbac.authorization.k8s.io/v1 PolicyRule. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

/**
 * What the controller does where its sites are (`namespace`, '' for all): read and update the sites,
 * their status and (for blockOwnerDeletion) their finalizers; every child kind of the registry (whose API
 * the cluster serves); Events.
 */
export function watchedNamespacePermissions(namespace: string, children: ChildRegistry = CHILDREN): Permission[] {
  const site = (verb: string, subresource?: string): Permission => ({
    verb,
    type: STATICSITES,
    subresource,
    namespace,
  });
  return [
    ...['get', 'list', 'watch', 'update'].map((verb) => site(verb)),
    site('update', 'status'),
    site('update', 'finalizers'),
    ...servedKinds(children).flatMap((kind) => CHILD_VERBS.map((verb) => ({ verb, type: kind.type, namespace }))),
    ...['create', 'patch'].map((verb) => ({ verb, type: EVENTS, namespace })),
  ];
}

/**
 * Permissions as RBAC rules, as `npm run generate` writes them into manifests/controller/controller-clusterrole.yaml: the
 * resources of one API group that take the same verbs share a rule, in the order they first appear.
 */
export function policyRules(permissions: readonly Permission[]): PolicyRule[] {
  const byResource = new Map<string, { group: string; resource: string; name?: string; verbs: string[] }>();
  for (const p of permissions) {
    const resource = p.subresource ? `${p.type.plural}/${p.subresource}` : p.type.plural;
    const key = `${p.type.group}|${resource}|${p.name ?? ''}`;
    const entry = byResource.get(key) ?? { group: p.type.group, resource, name: p.name, verbs: [] };
    if (!entry.verbs.includes(p.verb)) entry.verbs.push(p.verb);
    byResource.set(key, entry);
  }
  const rules: PolicyRule[] = [];
  for (const { group, resource, name, verbs } of byResource.values()) {
    const same = rules.find(
      (r) => r.apiGroups[0] === group && r.verbs.join() === verbs.join() && r.resourceNames?.join() === name,
    );
    if (same) same.resources.push(resource);
    else rules.push({ apiGroups: [group], resources: [resource], ...(name && { resourceNames: [name] }), verbs });
  }
  return rules;
}

/**
 * The rules of the controller's ClusterRole, and of the Role that replaces it for one namespace
 * (manifests/overlays/single-namespace): the sites, the registry's child kinds, Events.
 */
export function controllerRules(children: ChildRegistry = CHILDREN): PolicyRule[] {
  return policyRules(watchedNamespacePermissions('', children));
}

/** The rules for `children` alone, cluster-wide (what `--ingress-class` adds: manifests/overlays/ingress). */
export function childRules(children: ChildRegistry): PolicyRule[] {
  return policyRules(childPermissions(children));
}

function childPermissions(children: ChildRegistry): Permission[] {
  return servedKinds(children).flatMap((kind) => CHILD_VERBS.map((verb) => ({ verb, type: kind.type, namespace: '' })));
}

/** With --gateway: reading the Gateway (in `namespace`) whose addresses the records point at. */
export function gatewayReadPermissions(namespace: string): Permission[] {
  return ['get', 'list', 'watch'].map((verb) => ({ verb, type: GATEWAYS, namespace }));
}

/**
 * What `--gateway` adds (manifests/overlays/gateway grants it beside the ClusterRole of the registry's
 * fixed kinds): the rules for `children` (the HTTPRoute), and reading Gateways.
 */
export function gatewayModeRules(children: ChildRegistry): PolicyRule[] {
  return policyRules([...childPermissions(children), ...gatewayReadPermissions('')]);
}
