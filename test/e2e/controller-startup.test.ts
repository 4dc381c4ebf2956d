/**
 * The controller's start-up dependencies, through the built CLI against a real control plane of its
 * own (it starts without the CRD): a missing CRD, claims namespace or permission ends the process
 * within 10 s with the fix in its message; --create-claims-namespace makes the namespace; the
 * manifests' RBAC grants every permission the checks ask for (the API server answers each review).
 */

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { buildCrd } from '../../api/index.ts';
import { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd } from '../../devenv/crds.ts';
import { observedStatus } from '../../devenv/observed.ts';
import { freePort } from '../../devenv/ports.ts';
import { builtCli } from '../../devenv/webhook-process.ts';
import { applyControllerRbac } from '../support/controller-harness.ts';

interface Ended {
  code: number | null;
  stderr: string;
  ms: number;
}

/** `staticsite controller ARGS` left running, with its metrics port (for /readyz) and what it wrote. */
async function startController(kubeconfig: string, args: string[]) {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      builtCli(),
      'controller',
      `--kubeconfig=${kubeconfig}`,
      `--metrics-port=${port}`,
      '--metrics-bind-address=127.0.0.1',
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => {
    output.stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output.stderr += chunk.toString();
  });
  const ready = () =>
    eventually(
      'the controller ready',
      async () => {
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${output.stderr}`);
        return (await observedStatus(`https://127.0.0.1:${port}/readyz`)) === 200;
      },
      30_000,
    );
  return { child, output, ready };
}

/** `staticsite controller ARGS` to its end, or killed after `timeoutMs`. */
async function runController(kubeconfig: string, args: string[], timeoutMs = 20_000): Promise<Ended> {
  const started = Date.now();
  const { child, output } = await startController(kubeconfig, args);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  return { code, stderr: output.stderr, ms: Date.now() - started };
}

describe('e2e: the controller checks its start-up dependencies (built CLI, own control plane)', function () {
  this.timeout(120_000);
  const cp = new ControlPlane();
  const suffix = randomBytes(3).toString('hex');
  const ns = `startup-${suffix}`;

  before(async function () {
    this.timeout(180_000);
    await cp.start();
    await cp.ensureNamespace(ns);
  });
  after(async () => cp.stop());

  it('without the CRD: exits 1 within 10 s, naming the CRD and how to install it', async () => {
    const ended = await runController(cp.kubeconfigPath, [`--namespace=${ns}`, `--claims-namespace=${ns}`]);
    expect(ended.code, ended.stderr).to.equal(1);
    expect(ended.ms).to.be.below(10_000);
    expect(ended.stderr).to.include(
      'the StaticSite API (staticsite.dev/v1, staticsites) is not served: install the CRD first (kubectl apply -k manifests/crds/full)',
    );
  });

  it('without its claims namespace: exits 1 within 10 s, naming the namespace and the three fixes', async () => {
    await installCrd(cp.admin, buildCrd());
    const missing = `absent-${suffix}`;
    const ended = await runController(cp.kubeconfigPath, [`--namespace=${ns}`, `--claims-namespace=${missing}`]);
    expect(ended.code, ended.stderr).to.equal(1);
    expect(ended.ms).to.be.below(10_000);
    expect(ended.stderr).to.include(
      `the hostname claims namespace "${missing}" does not exist: create it (kubectl create namespace ${missing}), name an existing one with --claims-namespace, or pass --create-claims-namespace`,
    );
    expect((await cp.admin.get(`/api/v1/namespaces/${missing}`)).status).to.equal(404);
  });

  it('with --create-claims-namespace: creates it and becomes ready', async () => {
    const created = `made-${suffix}`;
    const { child, ready } = await startController(cp.kubeconfigPath, [
      `--namespace=${ns}`,
      `--claims-namespace=${created}`,
      '--create-claims-namespace',
    ]);
    try {
      await ready();
      expect((await cp.admin.get(`/api/v1/namespaces/${created}`)).status).to.equal(200);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('with --gateway and no Gateway API in the cluster: starts, logs the fix, and every site says why it has no route', async () => {
    const { child, output, ready } = await startController(cp.kubeconfigPath, [
      `--namespace=${ns}`,
      `--claims-namespace=${ns}`,
      `--gateway=${ns}/public`,
    ]);
    const sites = `/apis/staticsite.dev/v1/namespaces/${ns}/staticsites`;
    try {
      await ready();
      expect(output.stdout).to.include(
        '--gateway is set and the cluster serves no HTTPRoute (gateway.networking.k8s.io/v1): no routes; every site reports Ready=False (GatewayAPIMissing) until the Gateway API CRDs are installed and the controller restarted',
      );
      const site = { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', metadata: { name: 'hello', namespace: ns } };
      expect((await cp.admin.post(sites, { ...site, spec: { content: 'hi', replicas: 1 } })).status).to.equal(201);
      type Site = {
        status?: {
          url?: string;
          conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
        };
      };
      const reported = await eventually('Ready=False GatewayAPIMissing', async () => {
        const s = (await cp.admin.get<Site>(`${sites}/hello`)).body;
        const ready = s.status?.conditions?.find((c) => c.type === 'Ready');
        return ready?.reason === 'GatewayAPIMissing' ? { ready, url: s.status?.url } : undefined;
      });
      expect(reported.ready).to.include({
        status: 'False',
        message: `the cluster serves no Gateway API HTTPRoute (gateway.networking.k8s.io/v1): no route to Gateway ${ns}/public; install the Gateway API CRDs and restart the controller`,
      });
      expect(reported.url).to.equal(undefined);
    } finally {
      child.kill('SIGTERM');
      await cp.admin.patch(`${sites}/hello`, { metadata: { finalizers: null } });
      await cp.admin.delete(`${sites}/hello`);
    }
  });

  it('as a ServiceAccount with no roles: exits 1, naming what it may not do and where the roles are', async () => {
    const credentials = await cp.serviceAccountCredentials(ns, 'no-roles');
    const kubeconfig = await cp.writeKubeconfig('no-roles.kubeconfig', credentials, 'no-roles');
    const ended = await runController(kubeconfig, [`--namespace=${ns}`, `--claims-namespace=${ns}`]);
    expect(ended.code, ended.stderr).to.equal(1);
    expect(ended.stderr).to.include(`this identity may not get staticsites.staticsite.dev in namespace ${ns}, `);
    expect(ended.stderr).to.include(`update staticsites/status.staticsite.dev in namespace ${ns}`);
    expect(ended.stderr).to.include(`delete leases.coordination.k8s.io in namespace ${ns}`);
    expect(ended.stderr).to.include('grant the roles in manifests/controller/');
  });

  it("as its ServiceAccount with the manifests' RBAC: every check passes and it becomes ready", async () => {
    const sys = `sys-${suffix}`;
    await applyControllerRbac(cp, sys);
    const credentials = await cp.serviceAccountCredentials(sys, 'staticsite-controller');
    const kubeconfig = await cp.writeKubeconfig('controller.kubeconfig', credentials, 'staticsite-controller');
    const { child, ready } = await startController(kubeconfig, ['--leader-elect', `--leader-elect-namespace=${sys}`]);
    try {
      await ready();
    } finally {
      child.kill('SIGTERM');
    }
  });
});
