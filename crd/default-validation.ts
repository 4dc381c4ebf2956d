/**
 * The CRD-time check of every default in a schema (apiextensions-apiserver
 * pkg/apiserver/schema/defaulting/validation.go, ValidateDefaults): a default must not carry fields
 * its schema prunes, must pass the OpenAPI validation of its node, and must pass the node's CEL
 * rules (compiled for the node alone, once with oldSelf the default, once without). The API server
 * runs this before it compiles any rule for the CRD: with an invalid default the rules' compile and
 * cost errors are not reported at all.
 *
 * Not covered: defaults inside an embedded resource's metadata, apiVersion or kind (the server
 * checks them as ObjectMeta), and the shared runtime cost budget across defaults.
 */
import type { JSONSchemaProps } from './apiextensions.ts';
import { type FieldError, fieldErrors } from './apimachinery/field-error.ts';
import { compileRules, hasRules } from './cel/compile.ts';
import type { CelEnvironment } from './cel/environment.ts';
import { evaluate } from './cel/evaluate.ts';
import { jsonEqual } from './json-value.ts';
import { compileSchema } from './schema/compile.ts';
import { toFieldErrors } from './schema/openapi-errors.ts';
import { validateAgainstSchema } from './schema/openapi-validate.ts';
import { META_FIELDS, pruneUnknownFields } from './schema/prune.ts';

interface Walk {
  environment: CelEnvironment | undefined;
  errors: FieldError[];
}

function checkDefault(walk: Walk, schema: JSONSchemaProps, path: string, resourceRoot: boolean): void {
  const value = schema.default;
  const at = `${path}.default`;
  const node = compileSchema(schema).root;
  const pruned = pruneUnknownFields(structuredClone(value), node, {
    isResourceRoot: schema['x-kubernetes-embedded-resource'] === true,
  }).value;
  if (!jsonEqual(pruned, value)) walk.errors.push(fieldErrors.invalid(at, value, 'must not have unknown fields'));
  const openapi = toFieldErrors(validateAgainstSchema(node, value), at);
  if (openapi.length > 0) {
    walk.errors.push(...openapi);
    return;
  }
  if (!schema['x-kubernetes-validations'] && !hasRules(schema)) return;
  const { compiled } = compileRules(schema, {
    isResourceRoot: resourceRoot,
    basePath: path,
    ...(walk.environment && { environment: walk.environment }),
  });
  // The plain CEL validator: no ratcheting of an unchanged value here.
  const options = { basePath: at, ratcheting: false };
  const withOld = evaluate(compiled, value, value, options).errors;
  walk.errors.push(...withOld);
  // The default must also hold where there is no old value (create, uncorrelated update).
  if (withOld.length === 0) walk.errors.push(...evaluate(compiled, value, undefined, options).errors);
}

/** A schema node the walk visits. */
interface DefaultsAt {
  schema: JSONSchemaProps;
  path: string;
  /** The resource root, whose metadata, apiVersion and kind hold no checked defaults. */
  resourceRoot: boolean;
  /** Inside a resource's metadata, apiVersion or kind (checked as ObjectMeta by the server, not here). */
  insideMeta: boolean;
}

function visit(walk: Walk, at: DefaultsAt): void {
  const { schema, path } = at;
  const embedded = schema['x-kubernetes-embedded-resource'] === true;
  const isRoot = at.resourceRoot || embedded;
  const insideMeta = at.insideMeta && !embedded;
  if (schema.default !== undefined && schema.default !== null && !insideMeta) checkDefault(walk, schema, path, isRoot);
  // additionalProperties is not followed: defaults are forbidden there.
  if (schema.items) visit(walk, { schema: schema.items, path: `${path}.items`, resourceRoot: false, insideMeta });
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    visit(walk, {
      schema: prop,
      path: `${path}.properties[${name}]`,
      resourceRoot: false,
      insideMeta: insideMeta || (isRoot && META_FIELDS.has(name)),
    });
  }
}

/** The errors the API server gives for the defaults of `openAPIV3Schema` (its root a resource root). */
export function validateDefaults(
  openAPIV3Schema: JSONSchemaProps,
  basePath: string,
  environment?: CelEnvironment,
): FieldError[] {
  const walk: Walk = { environment, errors: [] };
  visit(walk, { schema: openAPIV3Schema, path: basePath, resourceRoot: true, insideMeta: false });
  return walk.errors;
}
