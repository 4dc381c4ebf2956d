import type { KubeApi } from '../kube/api-client.ts';
import { type ApiError, apiErrorOrThrow, isNotFound, statusMessage } from '../kube/api-error.ts';
import type { KubeObject } from '../kube/objects.ts';
import type { JsonPatchOperation } from '../kube/patch-types.ts';
import {
  CUSTOM_RESOURCE_DEFINITIONS,
  MUTATING_WEBHOOK_CONFIGURATIONS,
  type ResourceType,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
} from '../kube/resources.ts';
import { CertsError } from './errors.ts';
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

const WEBHOOK_RESOURCES: Record<WebhookKind, ResourceType> = {
  MutatingWebhookConfiguration: MUTATING_WEBHOOK_CONFIGURATIONS,
  ValidatingWebhookConfiguration: VALIDATING_WEBHOOK_CONFIGURATIONS,
};
const MAX_ATTEMPTS = 3;

interface WebhookConfiguration extends KubeObject {
  webhooks?: Array<{ name: string; clientConfig?: { caBundle?: string } }>;
}

interface Crd extends KubeObject {
  spec: {
    conversion?: { strategy?: string; webhook?: { clientConfig?: { caBundle?: string } } };
  };
}

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
      const result = await this.patchLoop<WebhookConfiguration>(WEBHOOK_RESOURCES[kind], name, (config) => {
        const ops: JsonPatchOperation[] = [];
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
    const result = await this.patchLoop<Crd>(CUSTOM_RESOURCE_DEFINITIONS, name, (crd) => {
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
  private async patchLoop<T extends KubeObject>(
    type: ResourceType,
    name: string,
    plan: (object: T) => { ops: JsonPatchOperation[]; patched: string[]; unchanged: string[] },
  ): Promise<InjectionResult | undefined> {
    const { kind } = type;
    const object = `${kind}/${name}`;
    for (let attempt = 1; ; attempt++) {
      let current: T;
      try {
        current = await this.api.get<T>(type, '', name);
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw this.apiError('get', kind, name, apiErrorOrThrow(error));
      }
      const { ops, patched, unchanged } = plan(current);
      if (ops.length === 0) return { object, patched, unchanged };
      try {
        await this.api.jsonPatch<T>(type, '', name, { operations: ops });
        return { object, patched, unchanged };
      } catch (error) {
        const failure = apiErrorOrThrow(error);
        // 409: changed under us; 422 "testing value /webhooks/0/name failed": the list was reordered.
        const retryable =
          failure.code === 409 || (failure.code === 422 && /testing value \S+ failed/.test(statusMessage(failure)));
        if (!retryable || attempt >= MAX_ATTEMPTS) throw this.apiError('patch', kind, name, failure);
      }
    }
  }

  private apiError(verb: string, kind: string, name: string, error: ApiError): CertsError {
    const server = statusMessage(error);
    if (error.code === 403) {
      return new CertsError(
        'Forbidden',
        `cannot ${verb} ${kind} ${name}: ${server}. Bind the bootstrapper's ServiceAccount to the ClusterRole in ${RBAC_FILE} ` +
          `(get and patch on ${kind === 'CustomResourceDefinition' ? 'customresourcedefinitions' : `${kind.toLowerCase()}s`} with resourceNames [${name}]).`,
      );
    }
    if (error.code === 404) {
      return new CertsError(
        'NotFound',
        `cannot ${verb} ${kind} ${name}: ${server}. It was deleted while bootstrap ran; apply it again.`,
      );
    }
    if (error.code === 409 || (error.code === 422 && /testing value \S+ failed/.test(server))) {
      return new CertsError(
        'Conflict',
        `cannot ${verb} ${kind} ${name}: ${server}. It kept changing under bootstrap (${MAX_ATTEMPTS} attempts); run bootstrap again.`,
      );
    }
    return new CertsError('ApiError', `cannot ${verb} ${kind} ${name}: HTTP ${error.code}: ${server}`);
  }
}
