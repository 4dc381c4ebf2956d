import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { buildCrd, FINALIZER } from '../../../api/index.ts';
import { eventually, installCrd } from '../../../devenv/crds.ts';
import { freePort } from '../../../devenv/ports.ts';
import { type LoopbackCerts, loopbackCerts } from '../../../devenv/webhook-certs.ts';
import { MUTATING_CONFIGS, VALIDATING_CONFIGS, webhookConfigurations } from '../../../devenv/webhook-configs.ts';
import { WebhookProcess } from '../../../devenv/webhook-process.ts';
import type { Drill } from './drill.ts';

const repoRoot = new URL('../../../', import.meta.url).pathname;
const RBAC_FILE = 'manifests/webhook/webhook-rbac.yaml';

/**
 * The built webhook (`staticsite webhook`, the shipped RBAC's ServiceAccount) in front of a drill's
 * namespace: the full CRD with its conversion webhook, and mutating and validating configurations as
 * the manifests have them (failurePolicy Fail) restricted to the drill's namespace. It listens on a
 * port fixed for the drill, so a killed webhook started again is reached by the registered URL.
 */
export class DrillWebhook {
  readonly name: string;
  readonly port: number;
  readonly certs: LoopbackCerts;
  process: WebhookProcess | undefined;
  private readonly drill: Drill;
  private readonly kubeconfig: string;

  private constructor(drill: Drill, name: string, port: number, certs: LoopbackCerts, kubeconfig: string) {
    this.drill = drill;
    this.name = name;
    this.port = port;
    this.certs = certs;
    this.kubeconfig = kubeconfig;
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** After drill.setUp(): RBAC, certs, the process, the CRD, the configurations, and waits until a create is mutated. */
  static async start(drill: Drill, name = `${drill.namespace}-webhook`): Promise<DrillWebhook> {
    const cp = drill.cp;
    const applied = await cp.kubectl(['apply', '-f', '-'], await rbacText(drill.system));
    if (applied.code !== 0) throw new Error(`kubectl apply ${RBAC_FILE}: ${applied.stderr}`);
    const creds = await cp.serviceAccountCredentials(drill.system, 'staticsite-webhook');
    const kubeconfig = await cp.writeKubeconfig(`${name}.kubeconfig`, creds, 'webhook');
    const webhook = new DrillWebhook(drill, name, await freePort(), await loopbackCerts(), kubeconfig);
    await webhook.restart();
    // The full CRD, as webhook.test.ts installs it: both versions, conversion by this webhook.
    await installCrd(
      cp.admin,
      buildCrd({ conversionClientConfig: { url: `${webhook.url}/convert`, caBundle: webhook.certs.caBundle } }),
    );
    const { mutating, validating } = webhookConfigurations(webhook.url, webhook.certs.caBundle, name);
    for (const hook of [...mutating.webhooks, ...validating.webhooks]) {
      Object.assign(hook, { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': drill.namespace } } });
    }
    await cp.admin.must('POST', MUTATING_CONFIGS, mutating);
    await cp.admin.must('POST', VALIDATING_CONFIGS, validating);
    // The API server picks configurations up asynchronously: wait until a create is mutated.
    await eventually('the webhook configurations active', async () => {
      const probe = {
        apiVersion: 'staticsite.dev/v1',
        kind: 'StaticSite',
        metadata: { name: 'probe' },
        spec: { content: 'x' },
      };
      const res = await cp.admin.post<{ metadata?: { finalizers?: string[] } }>(
        `/apis/staticsite.dev/v1/namespaces/${drill.namespace}/staticsites`,
        probe,
        { query: { dryRun: 'All' } },
      );
      return res.body.metadata?.finalizers?.includes(FINALIZER);
    });
    return webhook;
  }

  /** The configurations as the API server has them. */
  async configurations(): Promise<Array<{ kind: string; webhooks: Array<Record<string, unknown>> }>> {
    const admin = this.drill.cp.admin;
    return [
      await admin.must('GET', `${MUTATING_CONFIGS}/${this.name}`),
      await admin.must('GET', `${VALIDATING_CONFIGS}/${this.name}`),
    ];
  }

  /** SIGKILL: no drain, no goodbye; resolves once the process is gone (its port closed). */
  async kill(): Promise<void> {
    const proc = this.process?.process;
    if (!proc?.pid || !proc.running) throw new Error('the webhook is not running');
    process.kill(proc.pid, 'SIGKILL');
    await proc.exit;
    await proc.stop(); // closes its log
    this.process = undefined;
  }

  /** Starts the built webhook on the drill's port with the same certs; resolves once /readyz says it serves. */
  async restart(): Promise<void> {
    if (this.process?.process.running) throw new Error('the webhook is still running');
    this.process = await WebhookProcess.start({
      certDir: this.certs.dir,
      kubeconfig: this.kubeconfig,
      // WebhookProcess has no port option: the CLI's flags take the last value given.
      args: [`--port=${this.port}`],
    });
  }

  /** The configurations first (the drill's tearDown writes sites), then the rest after drill.tearDown(). */
  async unregister(): Promise<void> {
    await this.drill.cp.admin.delete(`${MUTATING_CONFIGS}/${this.name}`);
    await this.drill.cp.admin.delete(`${VALIDATING_CONFIGS}/${this.name}`);
  }

  /** After drill.tearDown(): the drills' CRD again (no conversion URL left pointing here), the process, RBAC, certs. */
  async stop(): Promise<void> {
    const cp = this.drill.cp;
    await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
    await this.process?.stop();
    await cp.kubectl(['delete', '--ignore-not-found', '-f', '-'], await rbacText(this.drill.system));
    await rm(this.certs.dir, { recursive: true, force: true });
  }
}

async function rbacText(system: string): Promise<string> {
  return (await readFile(join(repoRoot, RBAC_FILE), 'utf8')).replaceAll(
    'namespace: staticsite-system',
    `namespace: ${system}`,
  );
}
