import type {
  CustomResourceDefinition,
  CustomResourceDefinitionVersion,
  WebhookClientConfig,
} from '../crd/apiextensions.ts';
import {
  API_VERSION_V1,
  API_VERSION_V1ALPHA1,
  CONVERT_PATH,
  CRD_NAME,
  DEFAULT_NAMESPACE,
  GROUP,
  KIND,
  LIST_KIND,
  PLURAL,
  SERVED_VERSIONS,
  type ServedVersion,
  SHORT_NAMES,
  SINGULAR,
  STORAGE_VERSION,
  VERSION_V1ALPHA1,
  WEBHOOK_SERVICE_NAME,
} from './constants.ts';
import { type SchemaOptions, staticSiteSchema } from './schema.ts';

export interface CrdOptions extends SchemaOptions {
  /** Only v1, no conversion webhook: validation carried by the schema alone. */
  schemaOnly?: boolean;
  /** Where the API server reaches the conversion webhook. Default: the in-cluster Service. */
  conversionClientConfig?: WebhookClientConfig;
  /**
   * No scale subresource. For the admission-policy CRD: a scale request carries a Scale (replicas
   * only), so no policy can hold "prod needs 2 replicas" there, and without the CRD's own rule nothing
   * else would (docs/policies.md).
   */
  withoutScale?: boolean;
}

const PRINTER_COLUMNS: CustomResourceDefinitionVersion['additionalPrinterColumns'] = [
  { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', description: 'Desired pods' },
  { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Ready pods' },
  { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
  {
    name: 'Progressing',
    type: 'string',
    jsonPath: '.status.conditions[?(@.type=="Progressing")].status',
    priority: 1,
  },
  { name: 'Degraded', type: 'string', jsonPath: '.status.conditions[?(@.type=="Degraded")].status', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

export function defaultConversionClientConfig(namespace = DEFAULT_NAMESPACE): WebhookClientConfig {
  return { service: { namespace, name: WEBHOOK_SERVICE_NAME, path: CONVERT_PATH, port: 443 } };
}

/**
 * v1alpha1 is served, deprecated, until the major release that removes it (docs/storage-migration.md).
 * The text follows the API server's own for built-in APIs (k8s.io/apiserver pkg/endpoints/deprecation):
 * "<group/version> <Kind> is deprecated in vX.Y+, unavailable in vX.Y+; use <group/version> <Kind>".
 */
export const V1ALPHA1_DEPRECATION_WARNING = `${API_VERSION_V1ALPHA1} ${KIND} is deprecated in staticsite-operator v0.2+, unavailable in v1.0+; use ${API_VERSION_V1} ${KIND}`;

function crdVersion(name: ServedVersion, options: CrdOptions): CustomResourceDefinitionVersion {
  return {
    name,
    served: true,
    storage: name === STORAGE_VERSION,
    ...(name === VERSION_V1ALPHA1 && { deprecated: true, deprecationWarning: V1ALPHA1_DEPRECATION_WARNING }),
    schema: { openAPIV3Schema: staticSiteSchema(name, options) },
    subresources: {
      status: {},
      ...(!options.withoutScale && {
        scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.readyReplicas' },
      }),
    },
    additionalPrinterColumns: PRINTER_COLUMNS,
  };
}

/** The StaticSite CustomResourceDefinition, built from the one schema in this package. */
export function buildCrd(options: CrdOptions = {}): CustomResourceDefinition {
  const versions: readonly ServedVersion[] = options.schemaOnly ? [STORAGE_VERSION] : SERVED_VERSIONS;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME, labels: { 'app.kubernetes.io/part-of': 'staticsite-operator' } },
    spec: {
      group: GROUP,
      names: { kind: KIND, listKind: LIST_KIND, plural: PLURAL, singular: SINGULAR, shortNames: [...SHORT_NAMES] },
      scope: 'Namespaced',
      versions: versions.map((v) => crdVersion(v, options)),
      conversion: options.schemaOnly
        ? { strategy: 'None' }
        : {
            strategy: 'Webhook',
            webhook: {
              conversionReviewVersions: ['v1'],
              clientConfig: options.conversionClientConfig ?? defaultConversionClientConfig(),
            },
          },
    },
  };
}
