/**
 * The children of the drill's steady sites, before and after a rollout, and the controller's writes
 * to them in between (from the audit log): a write is needed when it changed what the controller
 * owns, and one write per child is all a change needs.
 */
import type { KubeHttp } from '../../../devenv/kube-http.ts';
import { parseApiPath } from '../history/api-path.ts';
import { isAccepted, isMutating } from '../history/requests.ts';
import type { History } from '../history/types.ts';

const CHILDREN = {
  configmaps: '/api/v1',
  services: '/api/v1',
  deployments: '/apis/apps/v1',
  httproutes: '/apis/gateway.networking.k8s.io/v1',
} as const;

interface ChildState {
  resourceVersion: string;
  /** What the controller owns of it: labels, annotations, owners, spec and data; never status. */
  content: string;
}

export type ChildSnapshot = Map<string, ChildState>;

interface KubeObject {
  metadata: {
    resourceVersion: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: unknown[];
  };
  spec?: unknown;
  data?: unknown;
}

function contentOf(object: KubeObject): string {
  const { labels, annotations = {}, ownerReferences } = object.metadata;
  // kube-controller-manager's, counted by it on every template change.
  const { 'deployment.kubernetes.io/revision': _revision, ...ours } = annotations;
  return JSON.stringify({ labels, annotations: ours, ownerReferences, spec: object.spec, data: object.data });
}

/** Every child of every site named, keyed `<resource>/<name>`; without a gateway, no HTTPRoutes. */
export async function childSnapshot(
  admin: KubeHttp,
  namespace: string,
  names: string[],
  options: { routes?: boolean } = {},
): Promise<ChildSnapshot> {
  const snapshot: ChildSnapshot = new Map();
  const kinds = Object.entries(CHILDREN).filter(([resource]) => resource !== 'httproutes' || options.routes !== false);
  for (const name of names) {
    for (const [resource, prefix] of kinds) {
      const res = await admin.get<KubeObject>(`${prefix}/namespaces/${namespace}/${resource}/${name}`);
      if (res.status !== 200) throw new Error(`${resource}/${name}: ${res.status} ${res.text}`);
      snapshot.set(`${resource}/${name}`, {
        resourceVersion: res.body.metadata.resourceVersion,
        content: contentOf(res.body),
      });
    }
  }
  return snapshot;
}

export interface ChildWrites {
  /** `<resource>/<name>` → the controller's accepted writes to it in the span. */
  writes: Record<string, number>;
  /** Children whose owned content differs between the snapshots. */
  changed: string[];
  /** Writes that did not need to happen: a child written with no change, or written more than once. */
  needless: string[];
  /** `staticsites/<name>/status` → the controller's status writes in the span. */
  statusWrites: Record<string, number>;
}

/** The controller's writes to the children (and the status) of the sites in `before`, between `from` and `to`. */
export function childWrites(options: {
  history: History;
  namespace: string;
  before: ChildSnapshot;
  after: ChildSnapshot;
  from: number;
  to: number;
}): ChildWrites {
  const { history, namespace, before, after, from, to } = options;
  const result: ChildWrites = { writes: {}, changed: [], needless: [], statusWrites: {} };
  for (const r of history.replicas.flatMap((replica) => replica.requests)) {
    if (!isMutating(r) || !isAccepted(r) || r.at < from || r.at > to) continue;
    const path = parseApiPath(r.path);
    const name = path?.name ?? r.name;
    if (path?.namespace !== namespace || name === undefined) continue;
    const key = `${path.resource}/${name}`;
    if (path.resource === 'staticsites' && path.subresource === 'status') {
      result.statusWrites[key] = (result.statusWrites[key] ?? 0) + 1;
    } else if (before.has(key) && !path.subresource) {
      result.writes[key] = (result.writes[key] ?? 0) + 1;
    }
  }
  for (const [key, state] of before) {
    const changed = after.get(key)?.content !== state.content;
    if (changed) result.changed.push(key);
    const writes = result.writes[key] ?? 0;
    if (writes > 0 && !changed) result.needless.push(`${key}: written ${writes} time(s), nothing changed`);
    if (writes > 1 && changed) result.needless.push(`${key}: written ${writes} times for one change`);
  }
  return result;
}
