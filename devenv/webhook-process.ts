import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../cli/package-root.ts';
import { ManagedProcess } from './managed-process.ts';
import { observedStatus } from './observed.ts';
import { freePort } from './ports.ts';
import { uninstrumentedEnv } from './uninstrumented-env.ts';

/** The built CLI, as the image and `npm install` run it (`node dist/bin/staticsite.js`, one bundle). */
export function builtCli(): string {
  const main = join(packageRoot(), 'dist', 'bin', 'staticsite.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
  return main;
}

export interface WebhookProcessOptions {
  certDir: string;
  /** With a kubeconfig the unique-hostname rule is on; without, the webhook runs standalone. */
  kubeconfig?: string;
  baseDomain?: string;
  /** The CLI entry point to run; default the built one (dist/bin/staticsite.js). */
  cli?: string;
  /** Extra environment, e.g. the manifest's NODE_OPTIONS. */
  env?: Record<string, string>;
  /** The webhook port; default a free one (a caller that must name it beforehand picks it with freePort). */
  port?: number;
  /** Extra flags after the ones this sets. */
  args?: string[];
  /** Node's own flags, before the CLI (e.g. --inspect). */
  nodeArgs?: string[];
  /**
   * Without the test run's V8 coverage (NODE_V8_COVERAGE instruments every block it runs): for a
   * test that measures the process's CPU time, which must be what ships.
   */
  uninstrumented?: boolean;
}

/** The arguments after the CLI's path that start `staticsite webhook` on loopback ports. */
export function webhookArgs(options: {
  certDir: string;
  port: number;
  metricsPort: number;
  baseDomain?: string;
  kubeconfig?: string;
}): string[] {
  return [
    'webhook',
    `--cert-dir=${options.certDir}`,
    `--port=${options.port}`,
    `--metrics-port=${options.metricsPort}`,
    '--host=127.0.0.1',
    // Reached by URL, not through a Service: stop at once (the delay is for pods behind one).
    '--shutdown-delay=0s',
    ...(options.baseDomain ? [`--base-domain=${options.baseDomain}`] : []),
    ...(options.kubeconfig ? [`--kubeconfig=${options.kubeconfig}`] : []),
  ];
}

/** `staticsite webhook` as a child process on loopback ports, ready when /readyz answers 200. */
export class WebhookProcess {
  readonly port: number;
  readonly metricsPort: number;
  readonly process: ManagedProcess;
  readonly metricsScheme: 'http' | 'https';

  private constructor(port: number, metricsPort: number, process: ManagedProcess, metricsScheme: 'http' | 'https') {
    this.port = port;
    this.metricsPort = metricsPort;
    this.process = process;
    this.metricsScheme = metricsScheme;
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** The metrics port's URL of `path`: HTTPS once the webhook has a cluster (secure metrics), else HTTP. */
  metricsUrl(path: string): string {
    return `${this.metricsScheme}://127.0.0.1:${this.metricsPort}${path}`;
  }

  static async start(options: WebhookProcessOptions): Promise<WebhookProcess> {
    const [port, metricsPort] = [options.port ?? (await freePort()), await freePort()];
    const args = [
      ...(options.nodeArgs ?? []),
      options.cli ?? builtCli(),
      ...webhookArgs({ ...options, port, metricsPort }),
      ...(options.args ?? []),
    ];
    const logDir = await mkdtemp(join(tmpdir(), 'staticsite-webhook-process-'));
    const env = { ...(options.uninstrumented ? uninstrumentedEnv(process.env) : process.env), ...options.env };
    const proc = new ManagedProcess('webhook', {
      command: process.execPath,
      args,
      logPath: join(logDir, 'webhook.log'),
      env,
    });
    const secure = options.kubeconfig !== undefined && !(options.args ?? []).includes('--metrics-secure=false');
    const webhook = new WebhookProcess(port, metricsPort, proc, secure ? 'https' : 'http');
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (!proc.running) throw new Error(`staticsite webhook exited. Last lines of its log:\n${await proc.tail()}`);
      const ready = (await observedStatus(webhook.metricsUrl('/readyz'))) === 200;
      if (ready) return webhook;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await proc.stop();
    throw new Error(`staticsite webhook not ready within 60 s. Last lines of its log:\n${await proc.tail()}`);
  }

  stop(): Promise<void> {
    return this.process.stop(15_000);
  }
}
