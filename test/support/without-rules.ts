import type { JSONSchemaProps } from '../../crd/apiextensions.ts';

/** The schema with every x-kubernetes-validations removed, at every level (a looser schema of the same shape). */
export function withoutRules(s: JSONSchemaProps): JSONSchemaProps {
  const { 'x-kubernetes-validations': _, ...rest } = s;
  const out: JSONSchemaProps = { ...rest };
  if (s.properties)
    out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, withoutRules(v)]));
  if (s.items) out.items = withoutRules(s.items);
  if (typeof s.additionalProperties === 'object') out.additionalProperties = withoutRules(s.additionalProperties);
  return out;
}
