import type { KubeObject } from '../kube/objects.ts';
import { objectKey } from '../kube/objects.ts';

/** How many of our own recent writes per object are remembered (a reconcile writes a site twice at most). */
const REMEMBERED = 4;

/**
 * Remembers the resourceVersions of the last writes this controller made to each object, so the
 * watch events that merely echo our own writes do not trigger another reconcile. An event with
 * exactly such a resourceVersion describes exactly the state we wrote: skipping it can never hide
 * a change made by someone else (theirs carry resourceVersions of their own).
 */
export class EchoFilter {
  private readonly written = new Map<string, string[]>();

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

  forget(kind: string, object: KubeObject): void {
    this.written.delete(`${kind}/${objectKey(object)}`);
  }
}
