import { execFileSync } from 'node:child_process';

export interface ManifestObject {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
}

const sortKeys = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(sortKeys)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
        )
      : v;

/** Objects as comparable text: kind, namespace and name, then the object with its keys sorted. */
export function canonicalObjects(objects: ManifestObject[]): string[] {
  return objects
    .map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name} ${JSON.stringify(sortKeys(o))}`)
    .sort();
}

/** Runs a devenv build script that builds a Go tool into the cache once and prints its path last. */
export function cachedGoTool(script: string, ...args: string[]): string {
  const out = execFileSync('bash', [script, ...args], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `/usr/local/go/bin:${process.env.PATH ?? ''}` },
  });
  return out.trim().split('\n').pop() ?? '';
}
