/**
 * `spec.hostname`'s default, `<name>.<namespace>.<baseDomain>`: the webhook writes it into v1 objects
 * and the controller uses it for a site whose spec has none. Undefined while the name or namespace
 * is not known yet (a create with generateName).
 */
export function defaultHostname(name: unknown, namespace: unknown, baseDomain: string): string | undefined {
  if (typeof name !== 'string' || name === '' || typeof namespace !== 'string' || namespace === '') return undefined;
  return `${name}.${namespace}.${baseDomain}`;
}

/** The hostname a stored v1 site serves: its spec's, else the default (a stored site always has a name and a namespace). */
export function siteHostname(
  site: { metadata: { name?: string; namespace?: string }; spec: { hostname?: string } },
  baseDomain: string,
): string {
  return site.spec.hostname ?? defaultHostname(site.metadata.name, site.metadata.namespace, baseDomain) ?? '';
}
