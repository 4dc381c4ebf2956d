import type { KubeObject } from '../kube/objects.ts';
import { objectKey } from '../kube/objects.ts';

/** How many of our own recent writes per object are remembered (a reconcile writes a site twice at most). */
const REMEMBERED = 4;

/**
 * The one record of this controller's own writes: the resourceVersions of its last writes to each
 * object (by kind and namespace/name), until the informer shows them. It serves two purposes:
 * - echo suppression (EventHandlers): a watch event with exactly such a resourceVersion describes
 *   exactly the state we wrote, so it is no change and is skipped. Skipping it can never hide a
 *   change made by someone else (theirs carry resourceVersions of their own);
 * - fresh enough reads (SiteReconciler): a cached object is used only once the cache shows our
 *   newest write to it; behind that, a read from the cache would only earn a 409 on the next write.
 * Either way, a write the cache has shown is forgotten, with every older one.
 */
export class OwnWrites {
  private readonly written = new Map<string, string[]>();

  /** This controller wrote `object` (as the API server answered the write). */
  wrote(kind: string, object: KubeObject): void {
    const rv = object.metadata.resourceVersion;
    if (!rv) return;
    const key = `${kind}/${objectKey(object)}`;
    const list = this.written.get(key) ?? [];
    list.push(rv);
    if (list.length > REMEMBERED) list.shift();
    this.written.set(key, list);
  }

  /** True when `object` is the echo of one of our own writes; that write (and older ones) are forgotten. */
  isEcho(kind: string, object: KubeObject): boolean {
    const key = `${kind}/${objectKey(object)}`;
    const list = this.written.get(key);
    const at = list?.indexOf(object.metadata.resourceVersion ?? '') ?? -1;
    if (!list || at < 0) return false;
    list.splice(0, at + 1);
    if (list.length === 0) this.written.delete(key);
    return true;
  }

  /**
   * True when the cached `object` is at least as new as our newest write to it (it shows that write,
   * or every write of ours has been seen): it can be read instead of asking the API server.
   */
  isCurrent(kind: string, object: KubeObject): boolean {
    this.isEcho(kind, object);
    return !this.written.has(`${kind}/${objectKey(object)}`);
  }

  /** The object is gone: its writes are forgotten. */
  forget(kind: string, key: string): void {
    this.written.delete(`${kind}/${key}`);
  }
}
