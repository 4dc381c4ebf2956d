import type { JSONSchemaProps, ValidationRule } from '../crd/apiextensions.ts';
import { celSelect, celString, needsParenthesesInOr } from './cel.ts';
import { DNS1123_SUBDOMAIN_REGEX, PROD_MIN_REPLICAS } from './constants.ts';

/**
 * What a rule's CEL calls the value it sits on (`self`) and, in a transition rule, that value before
 * the update (`oldSelf`).
 */
export interface RuleSubjects {
  self: string;
  oldSelf: string;
}

/**
 * One StaticSite rule. Every copy of it is generated from this entry: the CRD's
 * `x-kubernetes-validations` rule on the field at `path` (schemaWithRules), the webhook's (the webhook
 * compiles that CRD: webhook/admission/site-schemas.ts) and the ValidatingAdmissionPolicy's
 * validation (policyValidation).
 */
export interface SiteRule {
  /** The field the rule sits on, from the object's root: `['spec', 'tier']` is `spec.tier`. */
  path: readonly string[];
  /**
   * The rule's CEL over the value at `path` and, for a transition rule, the old one: the CRD names
   * them `self` and `oldSelf`, the policy `object.<path>` and `oldObject.<path>`.
   */
  cel: (subjects: RuleSubjects) => string;
  /** What a denial says. */
  message: string;
  /** Compares with `oldSelf`: checked on updates only, and only when both versions have the field. */
  transition: boolean;
}

export type RuleTable = readonly SiteRule[];

/** The StaticSite rules, in the order the policy checks them. */
export const SITE_RULES: RuleTable = [
  {
    path: ['spec'],
    cel: ({ self }) => `${self}.tier != 'prod' || ${self}.replicas >= ${PROD_MIN_REPLICAS}`,
    message: `prod sites need at least ${PROD_MIN_REPLICAS} replicas`,
    transition: false,
  },
  {
    path: ['spec', 'tier'],
    cel: ({ self, oldSelf }) => `${self} == ${oldSelf}`,
    message: 'tier is immutable',
    transition: true,
  },
  {
    // The same expression as k8s.io/apimachinery's IsDNS1123Subdomain.
    path: ['spec', 'hostname'],
    cel: ({ self }) => `${self}.matches(${celString(DNS1123_SUBDOMAIN_REGEX)})`,
    message:
      "hostname must be a lowercase RFC 1123 subdomain: lowercase alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character",
    transition: false,
  },
];

/** A name no rule's CEL contains: whether a rule's text holds it tells whether the rule reads `oldSelf`. */
const OLD_SELF_PROBE = '\u0000oldSelf\u0000';

/** The rule's CEL with `subjects` filled in; throws when `transition` says otherwise than the CEL does. */
function ruleCel(rule: SiteRule, subjects: RuleSubjects): string {
  const readsOld = rule.cel({ self: subjects.self, oldSelf: OLD_SELF_PROBE }).includes(OLD_SELF_PROBE);
  if (readsOld !== rule.transition) {
    throw new Error(
      `the rule on ${rule.path.join('.')} ${readsOld ? 'reads' : 'does not read'} oldSelf but says transition: ${rule.transition}`,
    );
  }
  return rule.cel(subjects);
}

/** The rule as the CRD's `x-kubernetes-validations` entry, over `self` and `oldSelf`. */
export function crdValidation(rule: SiteRule): ValidationRule {
  return { rule: ruleCel(rule, { self: 'self', oldSelf: 'oldSelf' }), message: rule.message };
}

/** `node` with `rule` added to the validations of the node at `path` below it; `node` itself when there is none. */
function withRuleAt(node: JSONSchemaProps, path: readonly string[], rule: ValidationRule): JSONSchemaProps {
  const [field, ...rest] = path;
  if (field === undefined) {
    return { ...node, 'x-kubernetes-validations': [...(node['x-kubernetes-validations'] ?? []), rule] };
  }
  const child = node.properties?.[field];
  if (child === undefined) return node;
  return { ...node, properties: { ...node.properties, [field]: withRuleAt(child, rest, rule) } };
}

/** The schema node at `path` below `schema`, if the schema has that field. */
export function schemaNodeAt(schema: JSONSchemaProps, path: readonly string[]): JSONSchemaProps | undefined {
  let node: JSONSchemaProps | undefined = schema;
  for (const field of path) node = node?.properties?.[field];
  return node;
}

/** A version's schema with each rule of the table on its field (a rule on a field the version lacks is left out). */
export function schemaWithRules(schema: JSONSchemaProps, rules: RuleTable): JSONSchemaProps {
  return rules.reduce((node, rule) => withRuleAt(node, rule.path, crdValidation(rule)), schema);
}

/** The prefixes of `path` whose last field an object may lack (not required by its parent), shortest first. */
function optionalPrefixes(schema: JSONSchemaProps, path: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < path.length; i++) {
    const parent = schemaNodeAt(schema, path.slice(0, i));
    if (!parent?.required?.includes(path[i] ?? '')) out.push(path.slice(0, i + 1));
  }
  return out;
}

/** A ValidatingAdmissionPolicy validation: CEL over the whole object and its old version. */
export interface PolicyValidation {
  expression: string;
  message: string;
}

/**
 * The rule as a ValidatingAdmissionPolicy validation over `object`/`oldObject`: `self` and `oldSelf`
 * become the selections of the rule's field from them, and guards skip the rule where the CRD would
 * not check it (the field absent; for a transition rule, a create or an old version without the field).
 * `schema` (a version's, with or without rules) says which fields of the path an object may lack.
 */
export function policyValidation(rule: SiteRule, schema: JSONSchemaProps): PolicyValidation {
  const optional = optionalPrefixes(schema, rule.path);
  const absent = (root: string) => optional.map((prefix) => `!has(${celSelect(root, prefix)})`);
  const guards = [...(rule.transition ? ['oldObject == null', ...absent('oldObject')] : []), ...absent('object')];
  const body = ruleCel(rule, { self: celSelect('object', rule.path), oldSelf: celSelect('oldObject', rule.path) });
  const operand = guards.length > 0 && needsParenthesesInOr(body) ? `(${body})` : body;
  return { expression: [...guards, operand].join(' || '), message: rule.message };
}
