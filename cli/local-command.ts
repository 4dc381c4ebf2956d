import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FINALIZER } from '../api/index.ts';
import { kubeconfigYaml } from '../devenv/controlplane.ts';
import { eventually } from '../devenv/crds.ts';
import { KubeHttp } from '../devenv/kube-http.ts';
import { readKubeconfig } from '../devenv/kubeconfig.ts';
import { LocalSystem } from '../devenv/local-system.ts';
import { NodeSimulator } from '../devenv/node-simulator.ts';
import { writeControlPlanePki } from '../devenv/pki.ts';
import { type CommandIO, UsageError } from './usage.ts';

export const localUsage =
  'staticsite local [--no-sample] [--exit-after-sample] | local pki --dir DIR [--server URL] | local simulate-nodes --kubeconfig F';

const SAMPLE_NAMESPACE = 'demo';
const SAMPLE = {
  apiVersion: 'staticsite.dev/v1',
  kind: 'StaticSite',
  metadata: { name: 'hello', namespace: SAMPLE_NAMESPACE },
  spec: { content: '<h1>Hello from StaticSite</h1>', replicas: 2 },
};

interface Site {
  metadata: { finalizers?: string[]; generation?: number };
  spec: { hostname?: string; replicas?: number; tier?: string };
  status?: {
    observedGeneration?: number;
    readyReplicas?: number;
    url?: string;
    conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
  };
}

async function showSample(system: LocalSystem, say: (line: string) => void): Promise<void> {
  const admin = system.controlPlane.admin;
  await system.controlPlane.ensureNamespace(SAMPLE_NAMESPACE);
  const path = `/apis/staticsite.dev/v1/namespaces/${SAMPLE_NAMESPACE}/staticsites`;
  const created = await admin.post<Site>(path, SAMPLE);
  if (created.status !== 201 && created.status !== 409) throw new Error(`create the sample site: ${created.text}`);
  say(`\napplied StaticSite ${SAMPLE_NAMESPACE}/hello (2 replicas)`);
  const site = created.body;
  say(
    `  admission: finalizer ${site.metadata.finalizers?.includes(FINALIZER) ? FINALIZER : '(missing!)'}, tier ${site.spec.tier}, hostname ${site.spec.hostname}`,
  );
  const ready = await eventually(
    'the sample site Ready',
    async () => {
      const res = await admin.get<Site>(`${path}/hello`);
      const condition = res.body.status?.conditions?.find((c) => c.type === 'Ready');
      return condition?.status === 'True' && res.body.status?.observedGeneration === res.body.metadata.generation
        ? res.body
        : undefined;
    },
    120_000,
    250,
  );
  for (const [kind, api] of [
    ['ConfigMap', '/api/v1'],
    ['Deployment', '/apis/apps/v1'],
    ['Service', '/api/v1'],
  ] as const) {
    const res = await admin.get<{ metadata: { ownerReferences?: Array<{ kind: string; name: string }> } }>(
      `${api}/namespaces/${SAMPLE_NAMESPACE}/${kind.toLowerCase()}s/hello`,
    );
    const owner = res.body.metadata?.ownerReferences?.[0];
    say(`  child: ${kind} ${SAMPLE_NAMESPACE}/hello, owned by ${owner ? `${owner.kind}/${owner.name}` : '(none)'}`);
  }
  const condition = ready.status?.conditions?.find((c) => c.type === 'Ready');
  say(
    `  status: Ready=${condition?.status} (${condition?.reason}: ${condition?.message}), readyReplicas ${ready.status?.readyReplicas}, url ${ready.status?.url}`,
  );
  for (const file of await readdir(system.recordsDir)) {
    say(
      `  external record: ${join(system.recordsDir, file)} = ${JSON.stringify(JSON.parse(await readFile(join(system.recordsDir, file), 'utf8')))}`,
    );
  }
}

/** `staticsite local pki`: the control plane's PKI and an admin kubeconfig, for docker-compose. */
async function pkiCommand(args: string[], io: CommandIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { dir: { type: 'string' }, server: { type: 'string', default: 'https://127.0.0.1:6443' } },
    strict: true,
    allowPositionals: false,
  });
  if (!values.dir) throw new UsageError('--dir is required');
  if (existsSync(join(values.dir, 'admin.kubeconfig'))) {
    io.stdout(`${values.dir} already holds a PKI; keeping it\n`);
    return 0;
  }
  const pki = await writeControlPlanePki(values.dir);
  const kubeconfig = kubeconfigYaml({ server: values.server, caPem: pki.ca.certPem, ...pki.admin }, 'admin');
  await writeFile(join(values.dir, 'admin.kubeconfig'), kubeconfig, { mode: 0o600 });
  io.stdout(`wrote the control-plane PKI and admin.kubeconfig (${values.server}) into ${values.dir}\n`);
  return 0;
}

/** `staticsite local simulate-nodes`: what a kubelet would do, for a control plane without nodes. */
async function simulateNodesCommand(args: string[], io: CommandIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { kubeconfig: { type: 'string' } },
    strict: true,
    allowPositionals: false,
  });
  if (!values.kubeconfig) throw new UsageError('--kubeconfig is required');
  const client = new KubeHttp(await readKubeconfig(values.kubeconfig));
  const nodes = new NodeSimulator(client);
  await eventually('the API server', async () => (await client.get('/readyz')).status === 200, 300_000, 1000);
  await nodes.start();
  io.stdout('node simulator running: pods are bound to a fake node and marked Ready\n');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await nodes.stop();
  client.close();
  return 0;
}

/** `staticsite local`: the whole system on this machine, until Ctrl-C. */
export async function localCommand(args: string[], io: CommandIO): Promise<number> {
  if (args[0] === 'pki') return pkiCommand(args.slice(1), io);
  if (args[0] === 'simulate-nodes') return simulateNodesCommand(args.slice(1), io);
  const { values } = parseArgs({
    args,
    options: {
      'no-sample': { type: 'boolean', default: false },
      'exit-after-sample': { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const say = (line: string) => io.stdout(`${line}\n`);
  const system = new LocalSystem({ log: say });
  await system.start();
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= system.stop();
    return stopping;
  };
  try {
    if (!values['no-sample']) await showSample(system, say);
    const cp = system.controlPlane;
    say(
      [
        '',
        'everything is running. Try:',
        `  export KUBECONFIG=${cp.kubeconfigPath} PATH=${cp.binDir}:$PATH`,
        '  kubectl get staticsites -A',
        `logs: ${cp.dir}/*.log`,
        'Ctrl-C stops every process and removes the temp dir.',
      ].join('\n'),
    );
    if (values['exit-after-sample']) return 0;
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    say('stopping...');
    return 0;
  } finally {
    await stop();
  }
}
