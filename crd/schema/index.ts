/**
 * The structural-schema half of the engine (crd/index.ts joins it with the CEL rules): compile an
 * OpenAPI v3 schema, prune, default, validate. Used by crd/admit.ts and by tests of its parts.
 */

export { type CompiledSchema, type CompileOptions, compileSchema } from './compile.ts';
export { applyDefaults } from './defaulting.ts';
export type { SchemaNode } from './node.ts';
export { simpleNameGenerator } from './prepare.ts';
export { type PruneOptions, pruneUnknownFields } from './prune.ts';
