import {
  DEFAULT_BASE_DOMAIN,
  DEFAULT_NAMESPACE,
  FINALIZER,
  GROUP,
  HOSTNAME_MAX_LENGTH,
  PLURAL,
  VERSION_V1,
} from './constants.ts';
import { HOSTNAME_DEFAULT, type HostnameDefault, hostnameDefaultCel } from './hostname.ts';
import { policyValidation, type RuleTable, SITE_RULES } from './rules.ts';
import { staticSiteSchema } from './schema.ts';

/**
 * The StaticSite rules as in-tree admission policies (CEL evaluated by kube-apiserver, no webhook):
 * a ValidatingAdmissionPolicy with the CRD's three rules, and a MutatingAdmissionPolicy with the
 * mutating webhook's two mutations. docs/policies.md says what each can and cannot do.
 */
export const VALIDATING_POLICY_NAME = 'staticsite-rules';
export const MUTATING_POLICY_NAME = 'staticsite-defaults';
/** The ConfigMap (in DEFAULT_NAMESPACE) that gives the mutating policy its base domain. */
export const POLICY_PARAMS_NAME = 'staticsite-policy-params';

const LABELS = { 'app.kubernetes.io/part-of': 'staticsite-operator' };

/** As the webhook configurations: StaticSite v1 writes, any version by equivalence, outside system namespaces. */
function matchConstraints() {
  return {
    resourceRules: [
      { apiGroups: [GROUP], apiVersions: [VERSION_V1], operations: ['CREATE', 'UPDATE'], resources: [PLURAL] },
    ],
    matchPolicy: 'Equivalent',
  };
}

function matchResources() {
  return {
    namespaceSelector: {
      matchExpressions: [
        { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', DEFAULT_NAMESPACE] },
      ],
    },
  };
}

/** What the policies are generated from. */
export interface PolicyOptions {
  /** The rules the validating policy holds. Default: SITE_RULES, the CRD's. */
  rules?: RuleTable;
  /** The hostname the mutating policy defaults. Default: HOSTNAME_DEFAULT, the webhook's. */
  hostnameDefault?: HostnameDefault;
}

/** The rules as the validating policy's validations, against the schema of the policies' CRD (v1). */
export function policyValidations(rules: RuleTable = SITE_RULES) {
  const schema = staticSiteSchema(VERSION_V1, { withoutCelRules: true });
  return rules.map((rule) => policyValidation(rule, schema));
}

export function validatingPolicy(options: PolicyOptions = {}) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: VALIDATING_POLICY_NAME, labels: LABELS },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: matchConstraints(),
      // reason Invalid: a 422, as the CRD's rules answer.
      validations: policyValidations(options.rules).map((v) => ({ ...v, reason: 'Invalid' })),
    },
  };
}

/** A policy's binding: same name as its policy, the webhooks' namespaces skipped. */
function policyBinding<Spec extends object>(kind: string, policyName: string, spec: Spec) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind,
    metadata: { name: policyName, labels: LABELS },
    spec: { policyName, ...spec, matchResources: matchResources() },
  };
}

export function validatingPolicyBinding() {
  return policyBinding('ValidatingAdmissionPolicyBinding', VALIDATING_POLICY_NAME, { validationActions: ['Deny'] });
}

/**
 * The mutating webhook's mutations: the finalizer on CREATE (not on an object being deleted), and
 * spec.hostname defaulted to <name>.<namespace>.<base domain> when it is absent, the name is known and
 * the result fits.
 */
export function mutatingPolicy(options: PolicyOptions = {}) {
  const hostname = hostnameDefaultCel(options.hostnameDefault ?? HOSTNAME_DEFAULT);
  const defaultsHostname = [
    'has(object.spec)',
    '!has(object.spec.hostname)',
    ...hostname.known,
    `size(variables.hostname) <= ${HOSTNAME_MAX_LENGTH}`,
  ].join(' && ');
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingAdmissionPolicy',
    metadata: { name: MUTATING_POLICY_NAME, labels: LABELS },
    spec: {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      failurePolicy: 'Fail',
      reinvocationPolicy: 'IfNeeded',
      matchConstraints: matchConstraints(),
      variables: [{ name: 'hostname', expression: hostname.value }],
      // JSON patches, not apply configurations: an apply configuration first converts the object to
      // its schema's types and so refuses, with its own message, objects the schema would refuse
      // later with the API server's (mutating admission runs before schema validation).
      mutations: [
        {
          patchType: 'JSONPatch',
          jsonPatch: {
            expression: `request.operation != 'CREATE' || has(object.metadata.deletionTimestamp) || (has(object.metadata.finalizers) && '${FINALIZER}' in object.metadata.finalizers) ? [] : has(object.metadata.finalizers) ? [JSONPatch{op: 'add', path: '/metadata/finalizers/-', value: '${FINALIZER}'}] : [JSONPatch{op: 'add', path: '/metadata/finalizers', value: ['${FINALIZER}']}]`,
          },
        },
        {
          patchType: 'JSONPatch',
          jsonPatch: {
            expression: `${defaultsHostname} ? [JSONPatch{op: 'add', path: '/spec/hostname', value: variables.hostname}] : []`,
          },
        },
      ],
    },
  };
}

export function mutatingPolicyBinding() {
  return policyBinding('MutatingAdmissionPolicyBinding', MUTATING_POLICY_NAME, {
    paramRef: { name: POLICY_PARAMS_NAME, namespace: DEFAULT_NAMESPACE, parameterNotFoundAction: 'Deny' },
  });
}

export function policyParams(baseDomain: string = DEFAULT_BASE_DOMAIN) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: POLICY_PARAMS_NAME, namespace: DEFAULT_NAMESPACE, labels: LABELS },
    data: { baseDomain },
  };
}

/** Every object of manifests/policies/policies.yaml, in apply order (params before the binding that needs them). */
export function policyObjects(options: PolicyOptions = {}) {
  return [
    validatingPolicy(options),
    validatingPolicyBinding(),
    policyParams(),
    mutatingPolicy(options),
    mutatingPolicyBinding(),
  ];
}
