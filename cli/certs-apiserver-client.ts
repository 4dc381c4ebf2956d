/**
 * `staticsite certs apiserver-client`: kube-apiserver's client certificate for `staticsite webhook
 * --client-ca`, issued by the webhook CA a `certs bootstrap --out-dir` run keeps, and the two files
 * the cluster admin passes to kube-apiserver (`--admission-control-config-file`). docs/certs.md,
 * "Authenticating the API server".
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { CommandLine, positiveInt } from './flags.ts';
import { type CommandIO, UsageError } from './usage.ts';

export const APISERVER_CLIENT = new CommandLine('certs apiserver-client', {
  'ca-dir': {
    type: 'string',
    value: 'DIR',
    required: true,
    help: 'the webhook CA: ca.crt and ca.key as certs bootstrap --out-dir writes them',
  },
  'out-dir': {
    type: 'string',
    value: 'DIR',
    required: true,
    help: 'write apiserver-client.crt/.key, webhook-client.kubeconfig, admission-configuration.yaml here',
  },
  'webhook-host': {
    type: 'string',
    multiple: true,
    default: [],
    value: 'HOST',
    help: 'a kubeconfig user per host the API server calls: SERVICE.NAMESPACE.svc, *.NAMESPACE.svc, HOST:PORT (URL webhooks) or *',
  },
  'kubeconfig-path': {
    type: 'string',
    value: 'PATH',
    help: 'where kube-apiserver will read the kubeconfig, absolute (default: the one in --out-dir)',
  },
  'validity-days': {
    type: 'string',
    default: '365',
    value: 'N',
    help: "lifetime of the API server's client certificate",
  },
});

async function readCaFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new Error(`cannot read ${path}: ${why}. --ca-dir is the --out-dir of staticsite certs bootstrap.`);
  }
}

async function writeAtomically(path: string, content: string, mode: number): Promise<void> {
  const tmp = `${path}.tmp`;
  await writeFile(tmp, content, { mode });
  await rename(tmp, path);
}

/** Issues the client certificate and writes the four files; prints what to do with them. */
export async function apiServerClientCommand(args: string[], io: CommandIO): Promise<number> {
  const flags = APISERVER_CLIENT.parse(args).values;
  const api = await import('../certs/apiserver-client.ts');
  const hosts = flags['webhook-host'];
  if (hosts.length === 0) throw new UsageError('--webhook-host is required (the host the API server calls)');
  api.checkWebhookHosts(hosts);
  const validityDays = positiveInt('--validity-days', flags['validity-days'], 3650);
  const caDir = flags['ca-dir'];
  const where = { cert: join(caDir, 'ca.crt'), key: join(caDir, 'ca.key') };
  const ca = api.currentCa(await readCaFile(where.cert), await readCaFile(where.key), where);
  const client = api.issueApiServerClientCertificate(ca, validityDays);
  const outDir = resolve(flags['out-dir']);
  await mkdir(outDir, { recursive: true, mode: 0o700 });
  const kubeconfigPath = flags['kubeconfig-path'] ?? join(outDir, 'webhook-client.kubeconfig');
  const admissionConfig = api.admissionConfigurationYaml(kubeconfigPath);
  await writeAtomically(join(outDir, 'apiserver-client.key'), client.keyPem, 0o600);
  await writeAtomically(join(outDir, 'apiserver-client.crt'), client.certPem, 0o644);
  await writeAtomically(join(outDir, 'webhook-client.kubeconfig'), api.webhookKubeconfigYaml(hosts, client), 0o600);
  await writeAtomically(join(outDir, 'admission-configuration.yaml'), admissionConfig, 0o644);
  io.stdout(
    `wrote ${outDir}: apiserver-client.crt, apiserver-client.key, webhook-client.kubeconfig, admission-configuration.yaml\n` +
      `kube-apiserver: --admission-control-config-file=<its path to admission-configuration.yaml> ` +
      `(it names the kubeconfig as ${kubeconfigPath})\n` +
      `webhook: --client-ca ${where.cert}\n`,
  );
  return 0;
}
