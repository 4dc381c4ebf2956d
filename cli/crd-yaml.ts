import { stringify } from 'yaml';
import type { CustomResourceDefinition } from '../api/index.ts';

/** Stable YAML for a CRD: the same input always gives byte-identical text. */
export function crdYaml(crd: CustomResourceDefinition): string {
  return yaml(crd);
}

/** Stable YAML for any generated object. */
export function yaml(value: unknown): string {
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}
