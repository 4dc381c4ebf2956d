/** RFC 7386 JSON merge patch: objects merge, `null` deletes, anything else replaces. */
export const MERGE_PATCH_CONTENT_TYPE = 'application/merge-patch+json';
/** RFC 6902 JSON patch: a list of operations (`test`, `add`, `replace`, ...), applied all or nothing. */
export const JSON_PATCH_CONTENT_TYPE = 'application/json-patch+json';

/** One RFC 6902 operation. */
export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}
