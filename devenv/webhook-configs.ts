/**
 * Mutating and validating configurations that send StaticSite writes to a webhook reached by URL,
 * with the same policy as manifests/webhook/webhook-configurations.yaml.
 */
export function webhookConfigurations(url: string, caBundle: string, name = 'staticsite-e2e') {
  const common = {
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    timeoutSeconds: 5,
    rules: [
      {
        apiGroups: ['staticsite.dev'],
        apiVersions: ['v1'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['staticsites'],
        scope: 'Namespaced',
      },
    ],
  };
  return {
    mutating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name },
      webhooks: [
        {
          name: 'mutate.staticsite.dev',
          clientConfig: { url: `${url}/mutate`, caBundle },
          reinvocationPolicy: 'IfNeeded',
          ...common,
        },
      ],
    },
    validating: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name },
      webhooks: [{ name: 'validate.staticsite.dev', clientConfig: { url: `${url}/validate`, caBundle }, ...common }],
    },
  };
}

export const MUTATING_CONFIGS = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
export const VALIDATING_CONFIGS = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
