import { celString } from './cel.ts';

/** What `spec.hostname`'s default is made of: the site's name, its namespace, the configured base domain. */
export type HostnamePart = 'name' | 'namespace' | 'baseDomain';

/**
 * `spec.hostname`'s default, in one place: its parts joined by `separator`. The TypeScript default
 * (defaultHostname: the mutating webhook and the controller) and the MutatingAdmissionPolicy's CEL
 * (hostnameDefaultCel) are both generated from it.
 */
export interface HostnameDefault {
  parts: readonly HostnamePart[];
  separator: string;
}

/** `<name>.<namespace>.<base domain>`. */
export const HOSTNAME_DEFAULT: HostnameDefault = { parts: ['name', 'namespace', 'baseDomain'], separator: '.' };

/**
 * Each part in a MutatingAdmissionPolicy (`cel`, and `celKnown` when the object may lack it) and
 * whether a TypeScript caller may not have it yet (`mayBeMissing`: a create with generateName has no
 * name, a request may lack the namespace; the policy's namespaceObject always has its name).
 */
const PARTS: Record<HostnamePart, { cel: string; celKnown?: string; mayBeMissing: boolean }> = {
  name: {
    cel: 'object.metadata.name',
    celKnown: "has(object.metadata.name) && object.metadata.name != ''",
    mayBeMissing: true,
  },
  namespace: { cel: 'namespaceObject.metadata.name', mayBeMissing: true },
  baseDomain: { cel: 'params.data.baseDomain', mayBeMissing: false },
};

/** The values of the parts; name and namespace as a request or an object has them (anything). */
export interface HostnameInputs {
  name: unknown;
  namespace: unknown;
  baseDomain: string;
}

/** The hostname `definition` gives; undefined while a part that may be unknown is not a non-empty string. */
export function composeHostname(definition: HostnameDefault, inputs: HostnameInputs): string | undefined {
  const values: string[] = [];
  for (const part of definition.parts) {
    const value = inputs[part];
    if (typeof value !== 'string' || (PARTS[part].mayBeMissing && value === '')) return undefined;
    values.push(value);
  }
  return values.join(definition.separator);
}

/**
 * The default as CEL in a MutatingAdmissionPolicy with a ConfigMap's `data.baseDomain` as its params:
 * `value` the hostname, `known` the conditions under which it can be computed (all must hold).
 */
export function hostnameDefaultCel(definition: HostnameDefault): { value: string; known: string[] } {
  return {
    value: definition.parts.map((part) => PARTS[part].cel).join(` + ${celString(definition.separator)} + `),
    known: [...new Set(definition.parts.flatMap((part) => PARTS[part].celKnown ?? []))],
  };
}

/**
 * `spec.hostname`'s default, `<name>.<namespace>.<baseDomain>` (HOSTNAME_DEFAULT): the webhook writes
 * it into v1 objects and the controller uses it for a site whose spec has none. Undefined while the
 * name or namespace is not known yet (a create with generateName).
 */
export function defaultHostname(name: unknown, namespace: unknown, baseDomain: string): string | undefined {
  return composeHostname(HOSTNAME_DEFAULT, { name, namespace, baseDomain });
}

/** The hostname a stored v1 site serves: its spec's, else the default (a stored site always has a name and a namespace). */
export function siteHostname(
  site: { metadata: { name?: string; namespace?: string }; spec: { hostname?: string } },
  baseDomain: string,
): string {
  return site.spec.hostname ?? defaultHostname(site.metadata.name, site.metadata.namespace, baseDomain) ?? '';
}
