import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';

export interface WebhookContainer {
  name: string;
  env?: Array<{ name: string; value?: string }>;
  resources?: { limits?: { memory?: string } };
}

const THIS_TREE = new URL('../../', import.meta.url).pathname;

/** The webhook container of manifests/webhook/webhook.yaml (of this tree, or the tree at `root`), as the cluster runs it. */
export function webhookContainer(root = THIS_TREE): WebhookContainer {
  const text = readFileSync(join(root, 'manifests/webhook/webhook.yaml'), 'utf8');
  for (const doc of loadAll(text)) {
    const o = doc as { kind?: string; spec?: { template?: { spec?: { containers?: WebhookContainer[] } } } };
    const c =
      o.kind === 'Deployment' ? o.spec?.template?.spec?.containers?.find((x) => x.name === 'webhook') : undefined;
    if (c) return c;
  }
  throw new Error('no webhook container in manifests/webhook/webhook.yaml');
}

/** The container's NODE_OPTIONS and memory limit in MiB. */
export function webhookRuntime(root = THIS_TREE): { nodeOptions: string; memoryLimitMi: number } {
  const c = webhookContainer(root);
  const limit = c.resources?.limits?.memory ?? '';
  const m = /^(\d+)Mi$/.exec(limit);
  if (!m) throw new Error(`expected the webhook memory limit in Mi, got ${JSON.stringify(limit)}`);
  return {
    nodeOptions: c.env?.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '',
    memoryLimitMi: Number(m[1]),
  };
}

/** The peak resident memory of a process so far (VmHWM), in MiB. */
export function peakRssMi(pid: number | undefined): number {
  return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}
