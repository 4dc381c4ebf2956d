/** One REST resource: where it lives and what it is called. */
export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

export const CONFIGMAPS: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
};
export const SERVICES: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'services',
  kind: 'Service',
  namespaced: true,
};
export const DEPLOYMENTS: ResourceType = {
  group: 'apps',
  version: 'v1',
  plural: 'deployments',
  kind: 'Deployment',
  namespaced: true,
};
export const EVENTS: ResourceType = { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true };
export const LEASES: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
  namespaced: true,
};

/** What a secure metrics server asks the API server (kube/metrics-auth.ts). */
export const TOKEN_REVIEWS: ResourceType = {
  group: 'authentication.k8s.io',
  version: 'v1',
  plural: 'tokenreviews',
  kind: 'TokenReview',
  namespaced: false,
};
export const SUBJECT_ACCESS_REVIEWS: ResourceType = {
  group: 'authorization.k8s.io',
  version: 'v1',
  plural: 'subjectaccessreviews',
  kind: 'SubjectAccessReview',
  namespaced: false,
};

export const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true };
export const MUTATING_WEBHOOK_CONFIGURATIONS: ResourceType = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'mutatingwebhookconfigurations',
  kind: 'MutatingWebhookConfiguration',
  namespaced: false,
};
export const VALIDATING_WEBHOOK_CONFIGURATIONS: ResourceType = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'validatingwebhookconfigurations',
  kind: 'ValidatingWebhookConfiguration',
  namespaced: false,
};
export const CUSTOM_RESOURCE_DEFINITIONS: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
};

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
