import type { CustomResourceDefinition, JSONSchemaProps } from '../../api/index.ts';

/** A namespaced CRD of one served, stored version `v1`, for suites that bring their own schema. */
export function singleVersionCrd(
  group: string,
  kind: string,
  plural: string,
  schema: JSONSchemaProps,
): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
    },
  };
}
