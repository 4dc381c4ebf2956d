import { CertsError } from './errors.ts';
import { JSON_PATCH, type KubeApi, type KubeResponse, statusMessage } from './kube.ts';
import { RBAC_FILE } from './secret-store.ts';

export type WebhookKind = 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';

/** What one injection did to one object. */
export interface InjectionResult {
  /** `MutatingWebhookConfiguration/name`, `CustomResourceDefinition/name`. */
  object: string;
  /** The webhook entries (or `conversion`) whose caBundle was written. */
  patched: string[];
  /** Entries that already carried the bundle. */
  unchanged: string[];
}

/** Puts the CA bundle where the API server reads it when it calls the webhook. */
export interface BundleInjector {
  inject(bundlePem: string): Promise<InjectionResult[]>;
}

export interface InjectionTargets {
  /** `NAME` (both kinds, at least one must exist), `mutating/NAME` or `validating/NAME`. */
  webhookConfigs: string[];
  /** CRD names whose `spec.conversion.webhook.clientConfig.caBundle` is set. */
  crds: string[];
}

const WEBHOOK_PATHS: Record<WebhookKind, string> = {
  MutatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
  ValidatingWebhookConfiguration: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
};
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const MAX_ATTEMPTS = 3;

interface WebhookConfiguration {
  metadata: { name: string };
  webhooks?: Array<{ name: string; clientConfig?: { caBundle?: string } }>;
}

interface Crd {
  metadata: { name: string };
  spec: {
    conversion?: { strategy?: string; webhook?: { clientConfig?: { caBundle?: string } } };
  };
}

type JsonPatchOp = { op: 'test' | 'add'; path: string; value: unknown };

/** Parses `--webhook-config` values: `NAME`, `mutating/NAME`, `validating/NAME`. */
export function parseWebhookConfigRef(ref: string): { kinds: WebhookKind[]; name: string } {
  const slash = ref.indexOf('/');
  if (slash < 0) return { kinds: ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'], name: ref };
  const prefix = ref.slice(0, slash).toLowerCase();
  const name = ref.slice(slash + 1);
  if (prefix === 'mutating' || prefix === 'mutatingwebhookconfiguration') {
    return { kinds: ['MutatingWebhookConfiguration'], name };
  }
  if (prefix === 'validating' || prefix === 'validatingwebhookconfiguration') {
    return { kinds: ['ValidatingWebhookConfiguration'], name };
  }
  throw new CertsError(
    'InvalidInput',
    `--webhook-config "${ref}": the prefix must be mutating/ or validating/ (or no prefix for both)`,
  );
}

/**
 * Injects the bundle with JSON patches that `add` exactly the caBundle of each entry that differs,
 * each guarded by a `test` of the entry's name (so a reordered list fails instead of patching the
 * wrong entry, and the patch is retried on a fresh read). Nothing else in the objects changes, and
 * an object that already carries the bundle is not written at all.
 */
export class KubeBundleInjector implements BundleInjector {
  private readonly api: KubeApi;
  private readonly targets: InjectionTargets;

  constructor(api: KubeApi, targets: InjectionTargets) {
    this.api = api;
    this.targets = targets;
    for (const ref of targets.webhookConfigs) parseWebhookConfigRef(ref);
  }

  async inject(bundlePem: string): Promise<InjectionResult[]> {
    const caBundle = Buffer.from(bundlePem).toString('base64');
    const results: InjectionResult[] = [];
    for (const ref of this.targets.webhookConfigs) results.push(...(await this.injectWebhookConfig(ref, caBundle)));
    for (const name of this.targets.crds) results.push(await this.injectCrd(name, caBundle));
    return results;
  }

  private async injectWebhookConfig(ref: string, caBundle: string): Promise<InjectionResult[]> {
    const { kinds, name } = parseWebhookConfigRef(ref);
    const results: InjectionResult[] = [];
    for (const kind of kinds) {
      const path = `${WEBHOOK_PATHS[kind]}/${encodeURIComponent(name)}`;
      const result = await this.patchLoop<WebhookConfiguration>(kind, name, path, (config) => {
        const ops: JsonPatchOp[] = [];
        const patched: string[] = [];
        const unchanged: string[] = [];
        (config.webhooks ?? []).forEach((webhook, i) => {
          if (webhook.clientConfig?.caBundle === caBundle) {
            unchanged.push(webhook.name);
            return;
          }
          patched.push(webhook.name);
          ops.push({ op: 'test', path: `/webhooks/${i}/name`, value: webhook.name });
          if (!webhook.clientConfig) ops.push({ op: 'add', path: `/webhooks/${i}/clientConfig`, value: {} });
          ops.push({ op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle });
        });
        return { ops, patched, unchanged };
      });
      if (result) results.push(result);
    }
    if (results.length === 0) {
      const which =
        kinds.length === 2 ? 'no MutatingWebhookConfiguration or ValidatingWebhookConfiguration' : `no ${kinds[0]}`;
      throw new CertsError(
        'NotFound',
        `${which} named "${name}" exists. Apply the webhook manifests first (kubectl apply -k manifests), or fix --webhook-config.`,
      );
    }
    return results;
  }

  private async injectCrd(name: string, caBundle: string): Promise<InjectionResult> {
    const path = `${CRD_PATH}/${encodeURIComponent(name)}`;
    const result = await this.patchLoop<Crd>('CustomResourceDefinition', name, path, (crd) => {
      const conversion = crd.spec.conversion;
      if (conversion?.strategy !== 'Webhook' || !conversion.webhook?.clientConfig) {
        throw new CertsError(
          'NoConversionWebhook',
          `CustomResourceDefinition ${name} has conversion strategy "${conversion?.strategy ?? 'None'}"${conversion?.strategy === 'Webhook' ? ' without spec.conversion.webhook.clientConfig' : ''}, so there is no caBundle to inject. ` +
            'Install the CRD with its conversion webhook (manifests/crds/full/crd.yaml), or drop --crd.',
        );
      }
      if (conversion.webhook.clientConfig.caBundle === caBundle)
        return { ops: [], patched: [], unchanged: ['conversion'] };
      return {
        ops: [
          { op: 'test', path: '/spec/conversion/strategy', value: 'Webhook' },
          { op: 'add', path: '/spec/conversion/webhook/clientConfig/caBundle', value: caBundle },
        ],
        patched: ['conversion'],
        unchanged: [],
      };
    });
    if (!result) {
      throw new CertsError(
        'NotFound',
        `CustomResourceDefinition ${name} does not exist. Install it first (kubectl apply -k manifests), or fix --crd.`,
      );
    }
    return result;
  }

  /** Reads, computes the patch, writes; on a conflict or a failed `test`, reads again. Undefined if absent. */
  private async patchLoop<T>(
    kind: string,
    name: string,
    path: string,
    plan: (object: T) => { ops: JsonPatchOp[]; patched: string[]; unchanged: string[] },
  ): Promise<InjectionResult | undefined> {
    const object = `${kind}/${name}`;
    for (let attempt = 1; ; attempt++) {
      const read = await this.api.request<T>('GET', path);
      if (read.status === 404) return undefined;
      if (read.status !== 200) throw this.apiError('get', kind, name, read);
      const { ops, patched, unchanged } = plan(read.body);
      if (ops.length === 0) return { object, patched, unchanged };
      const res = await this.api.request<T>('PATCH', path, ops, JSON_PATCH);
      if (res.status === 200) return { object, patched, unchanged };
      // 409: changed under us; 422 "testing value /webhooks/0/name failed": the list was reordered.
      const retryable =
        res.status === 409 || (res.status === 422 && /testing value \S+ failed/.test(statusMessage(res)));
      if (!retryable || attempt >= MAX_ATTEMPTS) throw this.apiError('patch', kind, name, res);
    }
  }

  private apiError(verb: string, kind: string, name: string, res: KubeResponse): CertsError {
    const server = statusMessage(res);
    if (res.status === 403) {
      return new CertsError(
        'Forbidden',
        `cannot ${verb} ${kind} ${name}: ${server}. Bind the bootstrapper's ServiceAccount to the ClusterRole in ${RBAC_FILE} ` +
          `(get and patch on ${kind === 'CustomResourceDefinition' ? 'customresourcedefinitions' : `${kind.toLowerCase()}s`} with resourceNames [${name}]).`,
      );
    }
    if (res.status === 404) {
      return new CertsError(
        'NotFound',
        `cannot ${verb} ${kind} ${name}: ${server}. It was deleted while bootstrap ran; apply it again.`,
      );
    }
    if (res.status === 409 || (res.status === 422 && /testing value \S+ failed/.test(server))) {
      return new CertsError(
        'Conflict',
        `cannot ${verb} ${kind} ${name}: ${server}. It kept changing under bootstrap (${MAX_ATTEMPTS} attempts); run bootstrap again.`,
      );
    }
    return new CertsError('ApiError', `cannot ${verb} ${kind} ${name}: HTTP ${res.status}: ${server}`);
  }
}
