/**
 * The warning the API server adds to every request for a deprecated CRD version
 * (k8s.io/apiextensions-apiserver pkg/apiserver/customresource_handler.go: the version's
 * deprecationWarning, or defaultDeprecationWarning), and the version order it uses
 * (k8s.io/apimachinery pkg/version CompareKubeAwareVersionStrings).
 */
import type { CustomResourceDefinition } from './apiextensions.ts';

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;
const STABILITY = { alpha: 0, beta: 1, ga: 2 } as const;

function parseKubeVersion(v: string): [major: number, stability: number, minor: number] | undefined {
  const m = KUBE_VERSION.exec(v);
  if (!m) return undefined;
  const stability = m[2] === 'alpha' ? STABILITY.alpha : m[2] === 'beta' ? STABILITY.beta : STABILITY.ga;
  return [Number(m[1]), stability, m[3] === undefined ? 0 : Number(m[3])];
}

/** Positive when `a` sorts after `b`: GA above beta above alpha, then major, then minor; others by text, below. */
export function compareKubeAwareVersions(a: string, b: string): number {
  if (a === b) return 0;
  const pa = parseKubeVersion(a);
  const pb = parseKubeVersion(b);
  if (!pa && !pb) return b < a ? -1 : b > a ? 1 : 0;
  if (!pa) return -1;
  if (!pb) return 1;
  return pa[1] - pb[1] || pa[0] - pb[0] || pa[2] - pb[2];
}

/** What the API server says of a deprecated version with no deprecationWarning of its own. */
export function defaultDeprecationWarning(version: string, spec: CustomResourceDefinition['spec']): string {
  const message = `${spec.group}/${version} ${spec.names.kind} is deprecated`;
  const newer = spec.versions
    .filter((v) => v.served && !v.deprecated && compareKubeAwareVersions(version, v.name) < 0)
    .map((v) => v.name)
    .sort((a, b) => compareKubeAwareVersions(b, a));
  return newer[0] === undefined ? message : `${message}; use ${spec.group}/${newer[0]} ${spec.names.kind}`;
}

/** The warnings every request for `version` of the CRD carries. */
export function deprecationWarnings(crd: CustomResourceDefinition, version: string): string[] {
  const v = crd.spec.versions.find((candidate) => candidate.name === version);
  if (!v?.deprecated) return [];
  return [v.deprecationWarning ?? defaultDeprecationWarning(version, crd.spec)];
}
