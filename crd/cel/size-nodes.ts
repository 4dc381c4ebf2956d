/** Size information for the static cost estimate, from declaration types. */

import type { SizeNode } from './cost.ts';
import type { DeclType } from './decl-types.ts';

/** Sizes as the API server's estimator sees them: maxItems/maxProperties/maxLength or request-size bounds. */
export function declSizeNode(decl: DeclType | undefined): SizeNode | undefined {
  if (!decl) return undefined;
  return {
    fromPath: true,
    size: () => decl.maxElements,
    field: (name) => (decl.kind === 'object' ? declSizeNode(decl.fields.get(name)?.type) : undefined),
    elem: () => (decl.kind === 'list' || decl.kind === 'map' ? declSizeNode(decl.elem) : undefined),
    // map keys are apiservercel.StringType, which declares no MaxElements
    key: () =>
      decl.kind === 'map'
        ? { size: () => 0, field: () => undefined, elem: () => undefined, key: () => undefined }
        : undefined,
  };
}
