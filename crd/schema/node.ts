import type { JSONSchemaProps } from '../apiextensions.ts';
import type { GoRegexp } from '../apimachinery/go-regexp.ts';
import type { FormatCheck } from './formats.ts';

/**
 * One node of a CRD schema, prepared once so that pruning, defaulting and validation do no
 * string parsing or regexp compiling per object.
 */
export interface SchemaNode {
  /** The OpenAPI types the value may have: one type, `integer,string` for int-or-string, or none. */
  types: readonly string[];
  /** `types` joined with a comma, as kube-openapi prints them. */
  typeText: string;
  nullable: boolean;
  /** The format after the API server stripped the ones it does not support (formats.go:93). */
  format: string;
  /** The strfmt check when the value is a string and the format is a known string format. */
  formatCheck: FormatCheck | undefined;
  /** For the number validator: the type and format it knows ranges for (schema.go numberValidator). */
  numberType: '' | 'integer' | 'number';
  numberFormat: string;

  properties: Map<string, SchemaNode> | undefined;
  additionalProperties: SchemaNode | undefined;
  /** additionalProperties given as a boolean (not allowed in structural schemas, kept for completeness). */
  additionalPropertiesAllows: boolean | undefined;
  items: SchemaNode | undefined;
  required: readonly string[];

  preserveUnknownFields: boolean;
  embeddedResource: boolean;
  intOrString: boolean;
  hasDefault: boolean;
  default: unknown;

  enum: readonly unknown[] | undefined;
  maximum: number | undefined;
  exclusiveMaximum: boolean;
  minimum: number | undefined;
  exclusiveMinimum: boolean;
  multipleOf: number | undefined;
  maxLength: number | undefined;
  minLength: number | undefined;
  pattern: string | undefined;
  patternRegexp: GoRegexp | undefined;
  /** Why `pattern` does not compile (kube-openapi then reports it with every string it checks). */
  patternError: string | undefined;
  maxItems: number | undefined;
  minItems: number | undefined;
  uniqueItems: boolean;
  maxProperties: number | undefined;
  minProperties: number | undefined;

  allOf: readonly SchemaNode[];
  anyOf: readonly SchemaNode[];
  oneOf: readonly SchemaNode[];
  not: SchemaNode | undefined;
  hasCombinators: boolean;

  listType: 'atomic' | 'set' | 'map' | undefined;
  listMapKeys: readonly string[];

  /** The properties that have a default, so defaulting does not scan them all. */
  defaultedProperties: readonly (readonly [string, SchemaNode])[];
  /** This node or one below it is a list-type set or map (the list-type walk skips other subtrees). */
  containsListType: boolean;

  /** The node as written in the CRD, for the CEL hook (x-kubernetes-validations and friends). */
  source: JSONSchemaProps;
}
