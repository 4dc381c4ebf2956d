import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load } from 'js-yaml';

/** Documented reasons why the ways may differ on a case. */
export const WEBHOOK_ONLY_BEHAVIOURS = {
  'duplicate-hostname':
    'only the webhook sees other objects: neither the schema nor a policy can refuse a hostname another StaticSite holds (a policy sees the object, its old version, its namespace and its parameters, never other objects of the kind)',
  'hostname-default':
    'only admission defaults spec.hostname (the mutating webhook, or the mutating policy through namespaceObject and its base-domain parameter): the default depends on the namespace, which no schema default can use',
  'cel-note':
    "without CEL rules in the CRD (B, E) the API server has no rules to skip, so its message lacks the 'some validation rules were not checked' note",
  conversion: 'the schema-only CRDs (A, E, F) serve v1 only: v1alpha1 needs the conversion webhook',
  finalizer:
    'only mutating admission (the webhook, or the mutating policy) adds the finalizer at admission; without it the controller adds it on first reconcile',
  'no-scale':
    "the policies' CRD (E) has no scale subresource (docs/policies.md), so the API server does not report a bad spec.replicas a second time through the scale path ('.spec.replicas accessor error'); without CEL rules its message also lacks the 'rules not checked' note, as B's",
  'policy-message':
    "a ValidatingAdmissionPolicy denies with `<resource> \"<name>\" is forbidden: ValidatingAdmissionPolicy '<policy>' with binding '<binding>' denied request: <message>` (422 with reason Invalid) and names only its first failed rule, where the CRD's rules name each failure at its field path",
} as const;
export type WebhookOnlyBehaviour = keyof typeof WEBHOOK_ONLY_BEHAVIOURS;

export interface CompareCase {
  file: string;
  name: string;
  intent: string;
  version: 'v1' | 'v1alpha1';
  object: Record<string, unknown>;
  old?: Record<string, unknown>;
  setup: Record<string, unknown>[];
  fieldValidation?: 'Strict' | 'Warn';
  webhookOnly: WebhookOnlyBehaviour[];
}

export class CorpusError extends Error {
  override name = 'CorpusError';
}

function asObject(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CorpusError(`${where}: expected a mapping`);
  return value as Record<string, unknown>;
}

/** Reads every `*.yaml` in the corpus directory: a list of cases per file. */
export async function readCorpus(dir: string): Promise<CompareCase[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  const cases: CompareCase[] = [];
  for (const file of files) {
    const list = load(await readFile(join(dir, file), 'utf8')) as unknown;
    if (!Array.isArray(list)) throw new CorpusError(`${file}: expected a list of cases`);
    for (const [i, raw] of list.entries()) {
      const where = `${file}[${i}]`;
      const item = asObject(raw, where);
      if (typeof item.name !== 'string' || typeof item.intent !== 'string') {
        throw new CorpusError(`${where}: name and intent are required`);
      }
      const webhookOnly = (item.webhookOnly ?? []) as string[];
      for (const b of webhookOnly) {
        if (!(b in WEBHOOK_ONLY_BEHAVIOURS)) throw new CorpusError(`${where}: unknown webhookOnly behaviour "${b}"`);
      }
      cases.push({
        file,
        name: item.name,
        intent: item.intent,
        version: item.version === 'v1alpha1' ? 'v1alpha1' : 'v1',
        object: asObject(item.object, `${where}.object`),
        ...(item.old !== undefined && { old: asObject(item.old, `${where}.old`) }),
        setup: ((item.setup ?? []) as unknown[]).map((o, j) => asObject(o, `${where}.setup[${j}]`)),
        ...(item.fieldValidation !== undefined && { fieldValidation: item.fieldValidation as 'Strict' | 'Warn' }),
        webhookOnly: webhookOnly as WebhookOnlyBehaviour[],
      });
    }
  }
  return cases;
}
