import {
  DEFAULT_BASE_DOMAIN,
  DEFAULT_NAMESPACE,
  FINALIZER,
  GROUP,
  HOSTNAME_MAX_LENGTH,
  HOSTNAME_MESSAGE,
  HOSTNAME_RULE,
  PLURAL,
  PROD_MIN_REPLICAS,
  PROD_REPLICAS_MESSAGE,
  TIER_IMMUTABLE_MESSAGE,
  VERSION_V1,
} from './constants.ts';

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

/** The CRD's rules rewritten from `self` (a field of the schema) to `object` (the whole object). */
export const POLICY_VALIDATIONS = [
  {
    expression: `object.spec.tier != 'prod' || object.spec.replicas >= ${PROD_MIN_REPLICAS}`,
    message: PROD_REPLICAS_MESSAGE,
  },
  {
    // A transition rule: only on UPDATE, and only when both sides have the field (as the CRD's).
    expression:
      'oldObject == null || !has(oldObject.spec.tier) || !has(object.spec.tier) || object.spec.tier == oldObject.spec.tier',
    message: TIER_IMMUTABLE_MESSAGE,
  },
  {
    expression: `!has(object.spec.hostname) || ${HOSTNAME_RULE.replace(/^self\./, 'object.spec.hostname.')}`,
    message: HOSTNAME_MESSAGE,
  },
] as const;

export function validatingPolicy() {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: VALIDATING_POLICY_NAME, labels: LABELS },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: matchConstraints(),
      // reason Invalid: a 422, as the CRD's rules answer.
      validations: POLICY_VALIDATIONS.map((v) => ({ ...v, reason: 'Invalid' })),
    },
  };
}

export function validatingPolicyBinding() {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: VALIDATING_POLICY_NAME, labels: LABELS },
    spec: { policyName: VALIDATING_POLICY_NAME, validationActions: ['Deny'], matchResources: matchResources() },
  };
}

/**
 * The mutating webhook's mutations: the finalizer on CREATE (not on an object being deleted), and
 * spec.hostname defaulted to <name>.<namespace>.<base domain> when it is absent, the name is known and
 * the result fits.
 */
export function mutatingPolicy() {
  const hostname = `object.metadata.name + '.' + namespaceObject.metadata.name + '.' + params.data.baseDomain`;
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingAdmissionPolicy',
    metadata: { name: MUTATING_POLICY_NAME, labels: LABELS },
    spec: {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      failurePolicy: 'Fail',
      reinvocationPolicy: 'IfNeeded',
      matchConstraints: matchConstraints(),
      variables: [{ name: 'hostname', expression: hostname }],
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
            expression: `has(object.spec) && !has(object.spec.hostname) && has(object.metadata.name) && object.metadata.name != '' && size(variables.hostname) <= ${HOSTNAME_MAX_LENGTH} ? [JSONPatch{op: 'add', path: '/spec/hostname', value: variables.hostname}] : []`,
          },
        },
      ],
    },
  };
}

export function mutatingPolicyBinding() {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingAdmissionPolicyBinding',
    metadata: { name: MUTATING_POLICY_NAME, labels: LABELS },
    spec: {
      policyName: MUTATING_POLICY_NAME,
      paramRef: { name: POLICY_PARAMS_NAME, namespace: DEFAULT_NAMESPACE, parameterNotFoundAction: 'Deny' },
      matchResources: matchResources(),
    },
  };
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
export function policyObjects() {
  return [validatingPolicy(), validatingPolicyBinding(), policyParams(), mutatingPolicy(), mutatingPolicyBinding()];
}
