import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { FINALIZER } from '../api/index.ts';
import { packageFile } from '../cli/package-root.ts';
import { kubeconfigYaml } from './controlplane.ts';
import { eventually } from './crds.ts';
import { writeBindConfig } from './dns/bind.ts';
import { KubeHttp } from './kube-http.ts';
import { readKubeconfig } from './kubeconfig.ts';
import { gatewayCurl } from './local-gateway.ts';
import type { LocalSystem } from './local-system.ts';
import { NodeSimulator } from './node-simulator.ts';
import { writeControlPlanePki } from './pki.ts';

const SAMPLE_NAMESPACE = 'demo';

/** The sample StaticSite of manifests/samples/hello.yaml, which docker compose applies too. */
async function sampleSite(): Promise<{ metadata: { name: string; namespace: string } }> {
  const documents = loadAll(await readFile(packageFile('manifests', 'samples', 'hello.yaml'), 'utf8'));
  const site = (documents as Array<{ kind?: string }>).find((o) => o.kind === 'StaticSite');
  if (!site) throw new Error('manifests/samples/hello.yaml has no StaticSite');
  return site as { metadata: { name: string; namespace: string } };
}

interface Site {
  metadata: { finalizers?: string[]; generation?: number };
  spec: { content: string; hostname?: string; replicas?: number; tier?: string };
  status?: {
    observedGeneration?: number;
    readyReplicas?: number;
    url?: string;
    conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
  };
}

/**
 * Applies the sample StaticSite, waits until it is Ready and says what admission and the controller did;
 * returns its hostname.
 */
export async function showSample(system: LocalSystem, say: (line: string) => void): Promise<string> {
  const admin = system.controlPlane.admin;
  await system.controlPlane.ensureNamespace(SAMPLE_NAMESPACE);
  const path = `/apis/staticsite.dev/v1/namespaces/${SAMPLE_NAMESPACE}/staticsites`;
  const created = await admin.post<Site>(path, await sampleSite());
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
  if (system.gateway) await showServed(system, ready, say);
  if (system.dns) {
    const hostname = ready.spec.hostname ?? '';
    const query = `dig @127.0.0.1 -p ${system.dns.port} ${hostname} CNAME`;
    const answer = await eventually(
      'the sample record in DNS',
      async () => (await system.dns?.dig(hostname, 'CNAME'))?.[0],
      30_000,
      200,
    );
    say(`  external record: ${query} -> ${answer}`);
  }
  for (const file of await readdir(system.recordsDir)) {
    say(
      `  external record: ${join(system.recordsDir, file)} = ${JSON.stringify(JSON.parse(await readFile(join(system.recordsDir, file), 'utf8')))}`,
    );
  }
  return ready.spec.hostname ?? '';
}

/** Waits until the gateway serves the sample's content by its hostname, and shows the curl that gets it. */
async function showServed(system: LocalSystem, site: Site, say: (line: string) => void): Promise<void> {
  const hostname = site.spec.hostname ?? '';
  const gateway = system.gateway;
  if (!gateway) return;
  await eventually(
    'the sample site served through the gateway',
    async () => {
      const res = await gateway.get(hostname).catch(() => undefined);
      return res?.status === 200 && res.body === site.spec.content;
    },
    60_000,
    250,
  );
  say(`  served through the gateway: ${gatewayCurl(hostname)} -> ${site.spec.content}`);
}

/**
 * BIND 9's files for docker-compose's `dns` service (named.conf, the zone, a new TSIG key), written
 * once: kept when the directory already holds them, so a restart keeps the zone and the key.
 */
export async function writeLocalDnsConfig(dir: string, port: number): Promise<string> {
  if (existsSync(join(dir, 'named.conf'))) return `${dir} already holds a DNS configuration; keeping it`;
  const zone = 'sites.staticsite.dev';
  await writeBindConfig(dir, { zone, keyName: 'staticsite-controller', secret: randomBytes(32), port });
  return `wrote named.conf, zone ${zone} and tsig.key to ${dir}: dig @127.0.0.1 -p ${port} hello.demo.${zone}`;
}

/**
 * The control plane's PKI and an admin kubeconfig for `server`, for docker-compose: written once,
 * kept when the directory already holds one. Returns what it did, in one line.
 */
export async function writeLocalPki(dir: string, server: string): Promise<string> {
  if (existsSync(join(dir, 'admin.kubeconfig'))) return `${dir} already holds a PKI; keeping it`;
  const pki = await writeControlPlanePki(dir);
  const kubeconfig = kubeconfigYaml({ server, caPem: pki.ca.certPem, ...pki.admin }, 'admin');
  await writeFile(join(dir, 'admin.kubeconfig'), kubeconfig, { mode: 0o600 });
  return `wrote the control-plane PKI and admin.kubeconfig (${server}) into ${dir}`;
}

/** What a kubelet would do, for a control plane without nodes: runs until `stop` resolves. */
export async function simulateNodes(kubeconfig: string, started: () => void, stop: Promise<void>): Promise<void> {
  const client = new KubeHttp(await readKubeconfig(kubeconfig));
  const nodes = new NodeSimulator(client);
  try {
    await eventually('the API server', async () => (await client.get('/readyz')).status === 200, 300_000, 1000);
    await nodes.start();
    started();
    await stop;
    await nodes.stop();
  } finally {
    client.close();
  }
}
