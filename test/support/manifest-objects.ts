import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

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

const repoRoot = new URL('../../', import.meta.url).pathname;

/**
 * A user's overlay, as manifests/components/webhook-from-control-plane tells them to write it: the
 * base plus the component, its placeholders replaced by these CIDRs and this metrics namespace.
 * Returns the directory to build.
 */
export function overlayWithControlPlane(cidrs: string[], metricsNamespace: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-from-control-plane-'));
  const from = cidrs.map((cidr) => `{ipBlock: {cidr: "${cidr}"}}`).join(', ');
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [${relative(dir, `${repoRoot}manifests/base`)}]
components: [${relative(dir, `${repoRoot}manifests/components/webhook-from-control-plane`)}]
patches:
  - target: {kind: NetworkPolicy, name: staticsite-webhook}
    patch: |-
      - {op: replace, path: /spec/ingress/0/from, value: [${from}]}
      - op: replace
        path: /spec/ingress/1/from/0/namespaceSelector/matchLabels/kubernetes.io~1metadata.name
        value: ${metricsNamespace}
`,
  );
  return dir;
}
