import type { CustomResourceDefinitionVersion, JSONSchemaProps } from '../../api/index.ts';
import { type CompiledCrdVersion, compileCrdVersion } from '../../crd/index.ts';
import { singleVersionCrd } from './single-version-crd.ts';

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
  const crd = singleVersionCrd(group, kind, `${kind.toLowerCase()}s`, openAPIV3Schema, options);
  return compileCrdVersion(crd);
}
