import { dump } from 'js-yaml';
import type { CustomResourceDefinition } from '../api/index.ts';

/** Stable YAML for a CRD: the same input always gives byte-identical text. */
export function crdYaml(crd: CustomResourceDefinition): string {
  return yaml(crd);
}

/** Stable YAML for any generated object. */
export function yaml(value: unknown): string {
  // Long lines unfolded, repeated objects written out (no anchors), strings that need quotes in double quotes.
  return dump(value, { lineWidth: -1, noRefs: true, quoteStyle: 'double' });
}
