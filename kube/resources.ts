/** One REST resource: where it lives and what it is called. */
export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

/** A ResourceType from its apiVersion (`group/version`, or `version` for the core group). */
function resource(apiVersion: string, plural: string, kind: string, namespaced = true): ResourceType {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  return { group, version: apiVersion.slice(slash + 1), plural, kind, namespaced };
}

export const CONFIGMAPS = resource('v1', 'configmaps', 'ConfigMap');
export const SERVICES = resource('v1', 'services', 'Service');
export const DEPLOYMENTS = resource('apps/v1', 'deployments', 'Deployment');
export const EVENTS = resource('v1', 'events', 'Event');
export const LEASES = resource('coordination.k8s.io/v1', 'leases', 'Lease');
export const SECRETS = resource('v1', 'secrets', 'Secret');
/** Gateway API (sigs.k8s.io/gateway-api, standard channel): the route a site is reached by. */
export const HTTPROUTES = resource('gateway.networking.k8s.io/v1', 'httproutes', 'HTTPRoute');
export const GATEWAYS = resource('gateway.networking.k8s.io/v1', 'gateways', 'Gateway');
/** The older way in (`--ingress-class`): an Ingress per site. */
export const INGRESSES = resource('networking.k8s.io/v1', 'ingresses', 'Ingress');

/** What a secure metrics server asks the API server (observability/metrics-auth.ts). */
export const TOKEN_REVIEWS = resource('authentication.k8s.io/v1', 'tokenreviews', 'TokenReview', false);
export const SUBJECT_ACCESS_REVIEWS = resource(
  'authorization.k8s.io/v1',
  'subjectaccessreviews',
  'SubjectAccessReview',
  false,
);

export const MUTATING_WEBHOOK_CONFIGURATIONS = resource(
  'admissionregistration.k8s.io/v1',
  'mutatingwebhookconfigurations',
  'MutatingWebhookConfiguration',
  false,
);
export const VALIDATING_WEBHOOK_CONFIGURATIONS = resource(
  'admissionregistration.k8s.io/v1',
  'validatingwebhookconfigurations',
  'ValidatingWebhookConfiguration',
  false,
);
export const CUSTOM_RESOURCE_DEFINITIONS = resource(
  'apiextensions.k8s.io/v1',
  'customresourcedefinitions',
  'CustomResourceDefinition',
  false,
);

export function apiVersionOf(type: ResourceType): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/** The collection path: all namespaces when `namespace` is empty. */
export function collectionPath(type: ResourceType, namespace?: string): string {
  const base = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  return type.namespaced && namespace ? `${base}/namespaces/${namespace}/${type.plural}` : `${base}/${type.plural}`;
}

export function objectPath(type: ResourceType, namespace: string, name: string, subresource?: string): string {
  const path = `${collectionPath(type, namespace)}/${encodeURIComponent(name)}`;
  return subresource ? `${path}/${subresource}` : path;
}
