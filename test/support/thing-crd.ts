import type { CustomResourceDefinition, CustomResourceDefinitionVersion, JSONSchemaProps } from '../../api/index.ts';
import { type CompiledCrdVersion, compileCrdVersion } from '../../crd/index.ts';

export interface ThingOptions {
  subresources?: CustomResourceDefinitionVersion['subresources'];
  namespaced?: boolean;
  kind?: string;
  group?: string;
  version?: string;
}

/** A one-version CRD around a schema (kind Thing, group example.com, v1 unless told), compiled. */
export function thingVersion(openAPIV3Schema: JSONSchemaProps, options: ThingOptions = {}): CompiledCrdVersion {
  const kind = options.kind ?? 'Thing';
  const group = options.group ?? 'example.com';
  const plural = `${kind.toLowerCase()}s`;
  const crd: CustomResourceDefinition = {
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
          schema: { openAPIV3Schema },
          ...(options.subresources && { subresources: options.subresources }),
        },
      ],
    },
  };
  return compileCrdVersion(crd);
}
