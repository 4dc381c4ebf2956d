import type { JSONSchemaProps } from '../apiextensions.ts';
import { compileGoRegexp, type GoRegexp } from '../apimachinery/go-regexp.ts';
import { formatCheck, normalizeFormatName } from './formats.ts';
import type { SchemaNode } from './node.ts';
import { pruneUnknownFields } from './prune.ts';

export type { SchemaNode } from './node.ts';

const INTEGER_FORMATS = new Set(['int32', 'int64']);
const NUMBER_FORMATS = new Set(['float', 'double']);
/** formats.go:33, after go-openapi's dash removal. */
const SUPPORTED_STRING_FORMATS = new Set(
  [
    'bsonobjectid',
    'uri',
    'email',
    'hostname',
    'ipv4',
    'ipv6',
    'cidr',
    'mac',
    'uuid',
    'uuid3',
    'uuid4',
    'uuid5',
    'isbn',
    'isbn10',
    'isbn13',
    'creditcard',
    'ssn',
    'hexcolor',
    'rgbcolor',
    'byte',
    'password',
    'date',
    'duration',
    'datetime',
    'k8s-short-name',
    'k8s-long-name',
  ].map(normalizeFormatName),
);

/** StripUnsupportedFormatsPostProcessorForVersion (formats.go:93). */
function keptFormat(type: string, format: string | undefined): string {
  if (!format) return '';
  switch (type) {
    case '':
    case 'string':
      return SUPPORTED_STRING_FORMATS.has(normalizeFormatName(format)) ? format : '';
    case 'integer':
      return INTEGER_FORMATS.has(format) ? format : '';
    case 'number':
      return NUMBER_FORMATS.has(format) ? format : '';
    default:
      return '';
  }
}

function compileNode(s: JSONSchemaProps): SchemaNode {
  let compiled: ReturnType<typeof compilePattern> | undefined;
  const pattern = () => {
    compiled ??= compilePattern(s.pattern);
    return compiled;
  };
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const types = intOrString ? ['integer', 'string'] : s.type ? [s.type] : [];
  const singleType = types.length === 1 ? (types[0] ?? '') : '';
  const format = keptFormat(singleType, s.format);
  const properties = s.properties
    ? new Map(Object.entries(s.properties).map(([k, v]) => [k, compileNode(v)] as const))
    : undefined;
  const additional = s.additionalProperties;
  const allOf = (s.allOf ?? []).map(compileNode);
  const anyOf = (s.anyOf ?? []).map(compileNode);
  const oneOf = (s.oneOf ?? []).map(compileNode);
  const not = s.not ? compileNode(s.not) : undefined;
  const numberType = singleType === 'integer' || singleType === 'number' ? singleType : '';
  return {
    types,
    typeText: types.join(','),
    nullable: s.nullable === true,
    format,
    formatCheck: format ? formatCheck(format) : undefined,
    numberType,
    numberFormat:
      numberType === 'integer' && INTEGER_FORMATS.has(format)
        ? format
        : numberType === 'number' && NUMBER_FORMATS.has(format)
          ? format
          : '',
    properties,
    additionalProperties: typeof additional === 'object' ? compileNode(additional) : undefined,
    additionalPropertiesAllows: typeof additional === 'boolean' ? additional : undefined,
    items: s.items ? compileNode(s.items) : undefined,
    required: s.required ?? [],
    preserveUnknownFields: s['x-kubernetes-preserve-unknown-fields'] === true,
    embeddedResource: s['x-kubernetes-embedded-resource'] === true,
    intOrString,
    hasDefault: s.default !== undefined && s.default !== null,
    default: s.default,
    enum: s.enum && s.enum.length > 0 ? s.enum : undefined,
    maximum: s.maximum,
    exclusiveMaximum: s.exclusiveMaximum === true,
    minimum: s.minimum,
    exclusiveMinimum: s.exclusiveMinimum === true,
    multipleOf: s.multipleOf,
    maxLength: s.maxLength,
    minLength: s.minLength,
    pattern: s.pattern || undefined,
    // compiled on the first string checked against it: a big CRD's objects touch few of its patterns
    get patternRegexp() {
      return pattern().patternRegexp;
    },
    get patternError() {
      return pattern().patternError;
    },
    maxItems: s.maxItems,
    minItems: s.minItems,
    uniqueItems: s.uniqueItems === true,
    maxProperties: s.maxProperties,
    minProperties: s.minProperties,
    allOf,
    anyOf,
    oneOf,
    not,
    hasCombinators: allOf.length > 0 || anyOf.length > 0 || oneOf.length > 0 || not !== undefined,
    listType: s['x-kubernetes-list-type'],
    listMapKeys: s['x-kubernetes-list-map-keys'] ?? [],
    defaultedProperties: properties ? [...properties].filter(([, p]) => p.hasDefault) : [],
    containsListType: false,
    source: s,
  };
}

function markListTypes(node: SchemaNode): boolean {
  let below = false;
  if (node.items && markListTypes(node.items)) below = true;
  if (node.additionalProperties && markListTypes(node.additionalProperties)) below = true;
  for (const prop of node.properties?.values() ?? []) if (markListTypes(prop)) below = true;
  node.containsListType = below || node.listType === 'set' || node.listType === 'map';
  return node.containsListType;
}

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** The scale paths split into fields once (".spec.replicas" -> ["spec", "replicas"]). */
export interface ScaleFields {
  specReplicasPath: string;
  spec: readonly string[];
  statusReplicasPath: string;
  status: readonly string[];
  labelSelectorPath: string | undefined;
  labelSelector: readonly string[] | undefined;
}

function scaleFields(scale: ScaleSubresource | undefined): ScaleFields | undefined {
  if (!scale) return undefined;
  const split = (path: string) => path.replace(/^\./, '').split('.');
  return {
    specReplicasPath: scale.specReplicasPath,
    spec: split(scale.specReplicasPath),
    statusReplicasPath: scale.statusReplicasPath,
    status: split(scale.statusReplicasPath),
    labelSelectorPath: scale.labelSelectorPath,
    labelSelector: scale.labelSelectorPath ? split(scale.labelSelectorPath) : undefined,
  };
}

export interface Subresources {
  status?: Record<string, never> | object;
  scale?: ScaleSubresource;
}

export interface CompileOptions {
  subresources?: Subresources;
}

/** A CRD version's schema ready for admit(). */
export interface CompiledSchema {
  root: SchemaNode;
  /** The status subresource is on: create drops status, update keeps the old one. */
  statusSubresource: boolean;
  scale: ScaleFields | undefined;
  /** Some node below the root is an embedded resource. */
  hasEmbeddedResources: boolean;
  /** Some node is a list-type set or map. */
  hasListTypes: boolean;
  /** Some structural node carries x-kubernetes-validations (the API server then has a CEL validator). */
  hasCelRules: boolean;
}

function someNode(node: SchemaNode, test: (n: SchemaNode) => boolean): boolean {
  if (test(node)) return true;
  if (node.items && someNode(node.items, test)) return true;
  if (node.additionalProperties && someNode(node.additionalProperties, test)) return true;
  for (const prop of node.properties?.values() ?? []) if (someNode(prop, test)) return true;
  return false;
}

/** PruneDefaults: a default loses the fields its own schema would prune (defaulting/prune.go). */
function pruneDefaults(node: SchemaNode, isRoot: boolean): void {
  if (node.hasDefault && typeof node.default === 'object' && node.default !== null) {
    node.default = pruneUnknownFields(node.default, node, { isResourceRoot: isRoot }).value;
  }
  if (node.items) pruneDefaults(node.items, false);
  if (node.additionalProperties) pruneDefaults(node.additionalProperties, false);
  for (const prop of node.properties?.values() ?? []) pruneDefaults(prop, false);
}

/** Prepares one CRD version's openAPIV3Schema (and its subresources) for admit(). */
/** The pattern compiled once; a pattern that does not compile keeps Go's reason for every check. */
function compilePattern(pattern: string | undefined): {
  patternRegexp: GoRegexp | undefined;
  patternError: string | undefined;
} {
  if (!pattern) return { patternRegexp: undefined, patternError: undefined };
  try {
    return { patternRegexp: compileGoRegexp(pattern), patternError: undefined };
  } catch (error) {
    return { patternRegexp: undefined, patternError: (error as Error).message };
  }
}

export function compileSchema(openAPIV3Schema: JSONSchemaProps, options: CompileOptions = {}): CompiledSchema {
  const root = compileNode(openAPIV3Schema);
  pruneDefaults(root, true);
  markListTypes(root);
  return {
    root,
    statusSubresource: options.subresources?.status !== undefined,
    scale: scaleFields(options.subresources?.scale),
    hasEmbeddedResources: [root.items, root.additionalProperties, ...(root.properties?.values() ?? [])].some(
      (n) => n !== undefined && someNode(n, (x) => x.embeddedResource),
    ),
    hasListTypes: root.containsListType,
    hasCelRules: someNode(root, (n) => (n.source['x-kubernetes-validations']?.length ?? 0) > 0),
  };
}
