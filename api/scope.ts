/**
 * The namespaces whose StaticSites the operator leaves alone, in one place: the webhook
 * configurations skip them (manifests/webhook/webhook-configurations.yaml, namespaceSelector
 * `kubernetes.io/metadata.name NotIn [...]`) and the controller skips them (`staticsite controller
 * --exclude-namespaces`, whose default is this list). test/unit/controller-scope.test.ts fails when
 * the manifests and this list drift apart.
 *
 * Why these: a site in kube-system or in the operator's own namespace would bypass admission (the
 * webhooks must not depend on themselves for the namespaces they run in), so the controller must not
 * act on it either.
 */
export const EXCLUDED_NAMESPACES: readonly string[] = ['kube-system', 'staticsite-system'];
