import type { JsonPatchOperation } from '../../../kube/patch-types.ts';

type Json = Record<string, unknown>;

/** RFC 7386 JSON merge patch: objects merge, `null` deletes a member, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Json = target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Json) } : {};
  for (const [k, v] of Object.entries(patch as Json)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

/**
 * RFC 6902 JSON patch, the operations clients here send (`test`, `add`, `replace`), all or nothing:
 * a failing operation throws with the API server's words and `doc` is left as it was.
 */
export function applyJsonPatch<T>(doc: T, operations: JsonPatchOperation[]): T {
  const out = structuredClone(doc);
  for (const op of operations) {
    const parts = op.path
      .split('/')
      .slice(1)
      .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
    const key = parts.pop() as string;
    let parent: unknown = out;
    for (const p of parts) {
      parent = (parent as Json | undefined)?.[p];
      if (parent === undefined || parent === null) throw new Error(`path ${op.path}: missing parent`);
    }
    const container = parent as Json;
    if (op.op === 'test') {
      if (JSON.stringify(container[key]) !== JSON.stringify(op.value)) {
        throw new Error(
          `the server rejected our request due to an error in our request: testing value ${op.path} failed`,
        );
      }
    } else if (op.op === 'add' || op.op === 'replace') {
      if (op.op === 'replace' && !(key in container)) throw new Error(`path ${op.path}: replace of a missing member`);
      container[key] = structuredClone(op.value);
    } else {
      throw new Error(`unsupported op ${op.op}`);
    }
  }
  return out;
}
