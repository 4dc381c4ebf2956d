/** Where a Kubernetes API request points, from its path. */
export interface ApiPath {
  /** '' for the core group (`/api/v1`). */
  group: string;
  version: string;
  /** Absent for a cluster-scoped resource. */
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
}

const LEASE_GROUP = 'coordination.k8s.io';

/**
 * `/api/v1/...` or `/apis/<group>/<version>/...`, namespaced (`namespaces/<ns>/<resource>`) or not;
 * undefined for anything else (discovery, /healthz). `/api/v1/namespaces/<name>` is the Namespace itself.
 */
export function parseApiPath(path: string): ApiPath | undefined {
  const parts = path.split('/').filter((p) => p !== '');
  let group: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    rest = parts.slice(1);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1] as string;
    rest = parts.slice(2);
  } else {
    return undefined;
  }
  const [version, ...tail] = rest as [string, ...string[]];
  const namespaced = tail[0] === 'namespaces' && tail.length >= 3 && !['status', 'finalize'].includes(tail[2] ?? '');
  const namespace = namespaced ? tail[1] : undefined;
  const [resource, name, subresource] = namespaced ? tail.slice(2) : tail;
  if (!resource) return undefined;
  return {
    group,
    version,
    resource,
    ...(namespace !== undefined && { namespace }),
    ...(name !== undefined && { name }),
    ...(subresource !== undefined && { subresource }),
  };
}

/** The Lease a request writes (`/apis/coordination.k8s.io/v1/namespaces/<ns>/leases[/<name>]`), if it is one. */
export function isLeasePath(path: ApiPath | undefined): path is ApiPath & { namespace: string } {
  return path?.group === LEASE_GROUP && path.resource === 'leases' && path.namespace !== undefined && !path.subresource;
}
