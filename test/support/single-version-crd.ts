import type { CustomResourceDefinition, CustomResourceDefinitionVersion, JSONSchemaProps } from '../../api/index.ts';

export interface SingleVersionOptions {
  /** Default v1. */
  version?: string;
  /** Default true. */
  namespaced?: boolean;
  subresources?: CustomResourceDefinitionVersion['subresources'];
}

/** A CRD of one served, stored version around a schema, for suites that bring their own schema. */
export function singleVersionCrd(
  group: string,
  kind: string,
  plural: string,
  schema: JSONSchemaProps,
  options: SingleVersionOptions = {},
): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
      scope: options.namespaced === false ? 'Cluster' : 'Namespaced',
      versions: [
        {
          name: options.version ?? 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: schema },
          ...(options.subresources && { subresources: options.subresources }),
        },
      ],
    },
  };
}
