/**
 * The scale benchmarks' shared set-up: their options, the shipped RBAC in a namespace of their own,
 * and the built webhook registered as the mutating and validating webhook of one namespace.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import type { KubeHttp } from '../../devenv/kube-http.ts';
import { loopbackCerts } from '../../devenv/webhook-certs.ts';
import { MUTATING_CONFIGS, VALIDATING_CONFIGS, webhookConfigurations } from '../../devenv/webhook-configs.ts';
import { WebhookProcess } from '../../devenv/webhook-process.ts';
import { applyControllerRbac } from '../../test/support/controller-harness.ts';

const repoRoot = new URL('../../', import.meta.url).pathname;

/** `[sites] [workers] [qps]` from the command line; BENCH_KCM_QPS and BENCH_SETTLED_SECONDS from the environment. */
export function benchOptions(defaultSites: number) {
  return {
    sites: Number(process.argv[2] ?? defaultSites),
    workers: Number(process.argv[3] ?? 8),
    qps: Number(process.argv[4] ?? 100),
    /** kube-controller-manager's client QPS (its own default is 20, which would pace the run). */
    kcmQps: Number(process.env.BENCH_KCM_QPS ?? 200),
    settledSeconds: Number(process.env.BENCH_SETTLED_SECONDS ?? 60),
  };
}

/** The controller's RBAC and `files` (manifests, their staticsite-system objects moved to `namespace`). */
export async function applyRbac(cp: ControlPlane, namespace: string, files: readonly string[]): Promise<void> {
  await applyControllerRbac(cp, namespace);
  for (const file of files) {
    const text = (await readFile(join(repoRoot, file), 'utf8')).replaceAll(
      'namespace: staticsite-system',
      `namespace: ${namespace}`,
    );
    const applied = await cp.kubectl(['apply', '-f', '-'], text);
    if (applied.code !== 0) throw new Error(`kubectl apply ${file}: ${applied.stderr}`);
  }
}

/**
 * The built webhook under its ServiceAccount (in `system`), registered for the namespace `sites`
 * only. `stop()` unregisters and stops it.
 */
export async function registeredWebhook(
  cp: ControlPlane,
  options: { system: string; sites: string; configName: string; args?: string[] },
) {
  const certs = await loopbackCerts();
  const creds = await cp.serviceAccountCredentials(options.system, 'staticsite-webhook');
  const webhook = await WebhookProcess.start({
    certDir: certs.dir,
    kubeconfig: await cp.writeKubeconfig(`${options.configName}.kubeconfig`, creds, 'webhook'),
    args: options.args,
    uninstrumented: true,
  });
  const { mutating, validating } = webhookConfigurations(webhook.url, certs.caBundle, options.configName);
  for (const hook of [...mutating.webhooks, ...validating.webhooks]) {
    Object.assign(hook, { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': options.sites } } });
  }
  await cp.admin.must('POST', MUTATING_CONFIGS, mutating);
  await cp.admin.must('POST', VALIDATING_CONFIGS, validating);
  return {
    webhook,
    /** The CA that signs the webhook's serving certificate, PEM. */
    ca: Buffer.from(certs.caBundle, 'base64').toString('utf8'),
    async stop() {
      await cp.admin.delete(`${MUTATING_CONFIGS}/${options.configName}`).catch(() => {});
      await cp.admin.delete(`${VALIDATING_CONFIGS}/${options.configName}`).catch(() => {});
      await webhook.stop();
      await rm(certs.dir, { recursive: true, force: true });
    },
  };
}

/**
 * Creates `body` at `path`, again after a second when the API server answers 500 or 429: the
 * webhook sheds load when its review workers stay busy (`... busy for 2000 ms; retry`), as a client
 * is told to. Resolves with the number of retries; throws on any other answer, or after 10 tries.
 */
export async function createRetrying(admin: KubeHttp, path: string, body: unknown): Promise<number> {
  for (let retries = 0; ; retries++) {
    const res = await admin.post(path, body);
    if (res.status === 201) return retries;
    if ((res.status !== 500 && res.status !== 429) || retries === 9) {
      throw new Error(`POST ${path}: HTTP ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
