/**
 * The upgrade drill, long form, with Helm: the last release (CHANGELOG.md) installed from its own
 * chart on a real node (`helm install`), upgraded to the working tree's chart (`helm upgrade
 * --reset-values`) and rolled back (`helm rollback`), each under the drill's traffic and checks
 * (test/support/upgrade-drill/phase.ts). No gateway here: the sites are served through their
 * Services, and the records are the chart's default store, files in the controller pods' emptyDir.
 * Run: npm run image && npm run bench:upgrade
 */
import { execFile } from 'node:child_process';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { packageFile } from '../cli/package-root.ts';
import { LEASE_NAME } from '../controller/manager.ts';
import { ControlPlane } from '../devenv/controlplane.ts';
import { eventually } from '../devenv/crds.ts';
import { defaultRouteAddress, getOnce, RealNode, realNodeImages } from '../devenv/real-node.ts';
import { releaseImage } from '../devenv/release/image.ts';
import { lastReleaseTree } from '../devenv/release/tree.ts';
import { operatorImage } from '../test/support/docker.ts';
import { cachedGoTool } from '../test/support/manifest-objects.ts';
import { CONTROLLER_AUDIT_POLICY } from '../test/support/upgrade-drill/audit.ts';
import {
  type PhaseOutcome,
  phaseProblems,
  phaseSummary,
  rolloutUnderTraffic,
} from '../test/support/upgrade-drill/phase.ts';
import type { SteadySite } from '../test/support/upgrade-drill/traffic.ts';

const run = promisify(execFile);
const SYSTEM = 'staticsite-system';
const NS = 'drill';
const HELM_VERSION = process.env.HELM_VERSION ?? 'v3.22.0';
const sites = `/apis/staticsite.dev/v1/namespaces/${NS}/staticsites`;

const tree = lastReleaseTree();
if (!tree) throw new Error('CHANGELOG.md names no released commit');
const helm = cachedGoTool(packageFile('devenv', 'helm', 'build.sh'), HELM_VERSION);
const built = await releaseImage(tree);
const releaseTag = `release-${tree.commit.slice(0, 12)}`;
const address = defaultRouteAddress();
const cp = await new ControlPlane({ nodeAddress: address, auditPolicy: CONTROLLER_AUDIT_POLICY }).start();
const node = await RealNode.start({
  controlPlane: cp,
  images: [...realNodeImages(), { source: built.image, names: [`staticsite-operator:${releaseTag}`] }],
});

async function helmRun(...args: string[]): Promise<void> {
  await run(helm, [...args, '--kubeconfig', cp.kubeconfigPath, '-n', SYSTEM, '--wait', '--timeout', '5m'], {
    maxBuffer: 16 << 20,
  });
  for (const deployment of ['staticsite-certs', 'staticsite-webhook', 'staticsite-controller']) {
    const status = await cp.kubectl(['-n', SYSTEM, 'rollout', 'status', `deployment/${deployment}`, '--timeout=300s']);
    if (status.code !== 0) throw new Error(status.stderr);
  }
}

/** The steady sites, Ready and served through their Services; their ClusterIPs by hostname. */
async function steadySites(): Promise<{ steady: SteadySite[]; ips: Map<string, string> }> {
  await cp.ensureNamespace(NS);
  const steady: SteadySite[] = [];
  const ips = new Map<string, string>();
  for (const name of ['steady-a', 'steady-b', 'steady-c']) {
    const html = `<h1>${name}</h1>`;
    const site = { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', metadata: { name }, spec: { content: html } };
    const created = await cp.admin.post(sites, site);
    if (created.status !== 201) throw new Error(created.text);
    const service = await eventually(
      `${name}'s Service`,
      async () => {
        const res = await cp.admin.get<{ spec: { clusterIP: string } }>(`/api/v1/namespaces/${NS}/services/${name}`);
        return res.status === 200 ? res.body.spec.clusterIP : undefined;
      },
      60_000,
    );
    const host = `${name}.${NS}.sites.staticsite.dev`;
    await eventually(
      `${name} served`,
      async () => (await getOnce(`http://${service}/`).catch(() => undefined))?.body === html,
      180_000,
    );
    ips.set(host, service);
    steady.push({ name, host, html });
  }
  return { steady, ips };
}

/** The record files of `site` in the pods that hold them: every live pod's, or the leader's alone. */
async function recordsOf(site: string, leaderOnly = false): Promise<string[]> {
  const lease = await cp.admin.get<{ spec: { holderIdentity?: string } }>(
    `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM}/leases/${LEASE_NAME}`,
  );
  const pods = await cp.admin.get<{ items: Array<{ metadata: { name: string; uid: string } }> }>(
    `/api/v1/namespaces/${SYSTEM}/pods?labelSelector=app.kubernetes.io/name=staticsite-controller`,
  );
  const holder = lease.body.spec.holderIdentity ?? '';
  const uids = pods.body.items
    .filter((p) => !leaderOnly || holder.startsWith(`${p.metadata.name}_`))
    .map((p) => p.metadata.uid);
  const files = await node.emptyDirFiles('records');
  return files.filter((f) => uids.includes(f.podUid) && basename(f.path) === `${NS}_${site}.json`).map((f) => f.path);
}

const results: Array<{ phase: string; summary: string; problems: Record<string, string[]>; steadyRecords: string }> =
  [];
try {
  const installStarted = Date.now();
  await helmRun(
    'install',
    'staticsite',
    join(tree.dir, 'charts', 'staticsite-operator'),
    '--create-namespace',
    '--set',
    `image.tag=${releaseTag}`,
  );
  const { steady, ips } = await steadySites();
  console.log(
    `${tree.label} installed with helm ${HELM_VERSION}, ${steady.length} sites served, in ${Date.now() - installStarted} ms`,
  );
  const phase = async (name: string, prefix: string, apply: () => Promise<void>, image: string) => {
    const outcome: PhaseOutcome = await rolloutUnderTraffic({
      cp,
      namespace: NS,
      prefix,
      steady,
      get: (host) => getOnce(`http://${ips.get(host)}/`).catch(() => undefined),
      apply,
      auditSince: installStarted,
      routes: false,
      recordOf: (site) => recordsOf(site),
    });
    // The file store lives in each pod: the leader after the rollout must hold every steady site's record.
    const held = await Promise.all(steady.map(async (s) => (await recordsOf(s.name, true)).length > 0));
    const problems = phaseProblems(outcome, image);
    if (held.includes(false))
      problems['steady records missing from the leader'] = steady.filter((_, i) => !held[i]).map((s) => s.name);
    results.push({
      phase: name,
      summary: phaseSummary(outcome),
      problems,
      steadyRecords: `${held.filter(Boolean).length}/${steady.length}`,
    });
    console.log(`${name}: ${phaseSummary(outcome)}; problems: ${JSON.stringify(problems)}`);
  };
  await phase(
    'helm upgrade',
    'up',
    () => helmRun('upgrade', 'staticsite', packageFile('charts', 'staticsite-operator'), '--reset-values'),
    operatorImage(),
  );
  await phase(
    'helm rollback',
    'down',
    () => helmRun('rollback', 'staticsite', '1'),
    `staticsite-operator:${releaseTag}`,
  );
} finally {
  await node.stop();
  await cp.stop();
}
console.log(JSON.stringify({ release: tree.label, helm: HELM_VERSION, results }, null, 2));
process.exitCode = results.every((r) => Object.keys(r.problems).length === 0) ? 0 : 1;
