import type { OwnerReference, StaticSiteV1 } from '../../api/index.ts';
import { deepCopyJson, jsonEqual } from '../../crd/json-value.ts';
import type { CallOptions, KubeApi } from '../../kube/api-client.ts';
import { isAlreadyExists } from '../../kube/api-error.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { apiVersionOf } from '../../kube/resources.ts';
import type { ChildKind, ChildOptions } from './children.ts';
import { controllerOf, isControlledBy } from './ownership.ts';

export type EnsureResult<T extends KubeObject> =
  | { outcome: 'created' | 'updated' | 'unchanged'; object: T }
  /** An object of that name exists and is not controlled by this site: reported, never adopted. */
  | { outcome: 'conflict'; object: T; controller: OwnerReference | undefined }
  /** Our child is being deleted; wait for it to go, then create it again. */
  | { outcome: 'terminating'; object: T };

/** Where ensure reads the live child: the informer cache (filtered by our label). */
export interface ChildLookup<T extends KubeObject> {
  get(key: string): T | undefined;
}

export interface EnsureDeps<T extends KubeObject> {
  api: KubeApi;
  cache: ChildLookup<T>;
  options: ChildOptions;
  call?: CallOptions;
  /** Told the resourceVersion of every object this controller wrote, so their watch echo can be skipped. */
  wrote?: (object: T) => void;
}

/**
 * controllerutil.CreateOrUpdate, with ownership: start from the live child (or an empty one), set
 * only our fields, and write only when that changed something. A 409 AlreadyExists on create means
 * our cache was behind or the name is taken: the live object is read and judged like a cached one.
 */
export async function ensureChild<T extends KubeObject>(
  kind: ChildKind<T>,
  site: StaticSiteV1,
  name: string,
  deps: EnsureDeps<T>,
): Promise<EnsureResult<T>> {
  const namespace = site.metadata.namespace ?? '';
  let live = deps.cache.get(`${namespace}/${name}`);
  if (!live) {
    const fresh = {
      apiVersion: apiVersionOf(kind.type),
      kind: kind.type.kind,
      metadata: { name, namespace },
    } as T;
    kind.mutate(fresh, site, deps.options);
    try {
      const created = await deps.api.create(kind.type, namespace, fresh, deps.call);
      deps.wrote?.(created);
      return { outcome: 'created', object: created };
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      live = await deps.api.get<T>(kind.type, namespace, name, deps.call);
    }
  }
  if (!isControlledBy(live, site)) return { outcome: 'conflict', object: live, controller: controllerOf(live) };
  if (live.metadata.deletionTimestamp) return { outcome: 'terminating', object: live };
  const desired = deepCopyJson(live);
  kind.mutate(desired, site, deps.options);
  const differs = kind.differs ? kind.differs(desired, live) : !jsonEqual(desired, live);
  if (!differs) return { outcome: 'unchanged', object: live };
  const updated = await deps.api.update(kind.type, desired, deps.call);
  deps.wrote?.(updated);
  return { outcome: 'updated', object: updated };
}
