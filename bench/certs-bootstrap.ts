/**
 * A full `staticsite certs bootstrap` (CA and serving keys, certificates, two Secrets, caBundle
 * patches into a MutatingWebhookConfiguration, a ValidatingWebhookConfiguration and a CRD) against
 * the real control plane, timed: in-process (what --watch pays) and as a fresh CLI process (what a
 * Job or init container pays, Node start-up and module loading included). Also the idempotent
 * second run and a directory-only run. Budget: a full bootstrap under 2 s.
 *
 * Run: node bench/certs-bootstrap.ts [runs=10]
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { buildCrd } from '../api/index.ts';
import {
  API_REQUEST_TIMEOUT_MS,
  bootstrap,
  DirectoryStore,
  defaultConfig,
  KubeBundleInjector,
  SecretStore,
} from '../certs/index.ts';
import { SystemClock } from '../clock/clock.ts';
import { ControlPlane, controlPlaneBinDir } from '../devenv/controlplane.ts';
import { installCrd } from '../devenv/crds.ts';
import { connectKubeApi } from '../kube/connect.ts';

const runs = Number(process.argv[2] ?? 10);
const NS = 'certs-bench';
const GROUP = 'certs-bench.staticsite.test';
const CRD_NAME = `staticsites.${GROUP}`;
const CONFIG = 'certs-bench-webhook';
const logger = pino({ level: 'silent' });
const repoRoot = new URL('../', import.meta.url).pathname;
const systemClock = new SystemClock();

function stats(ms: number[]) {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const r = (x: number) => Math.round(x);
  return {
    n: sorted.length,
    minMs: r(sorted[0] ?? 0),
    medianMs: r(at(0.5)),
    p90Ms: r(at(0.9)),
    maxMs: r(sorted.at(-1) ?? 0),
  };
}

function webhookConfig(kind: 'Mutating' | 'Validating', entries: string[]) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name: CONFIG },
    webhooks: entries.map((name) => ({
      name,
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      failurePolicy: 'Ignore',
      clientConfig: { url: 'https://127.0.0.1:9/x' },
      rules: [{ operations: ['CREATE'], apiGroups: [GROUP], apiVersions: ['v1'], resources: ['staticsites'] }],
    })),
  };
}

const cp = await new ControlPlane({ binDir: await controlPlaneBinDir() }).start();
try {
  await cp.ensureNamespace(NS);
  const crd = buildCrd({ conversionClientConfig: { url: 'https://127.0.0.1:9/convert' } });
  await installCrd(cp.admin, { ...crd, metadata: { name: CRD_NAME }, spec: { ...crd.spec, group: GROUP } });
  await cp.admin.must(
    'POST',
    '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
    webhookConfig('Mutating', ['a.certs.bench', 'b.certs.bench']),
  );
  await cp.admin.must(
    'POST',
    '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
    webhookConfig('Validating', ['v.certs.bench']),
  );

  const loadStarted = performance.now();
  const api = await connectKubeApi(cp.kubeconfigPath, { clock: systemClock, requestTimeoutMs: API_REQUEST_TIMEOUT_MS });
  const kubeConfigLoadMs = Math.round(performance.now() - loadStarted);
  const injector = new KubeBundleInjector(api, { webhookConfigs: [CONFIG], crds: [CRD_NAME] });
  const config = defaultConfig('staticsite-webhook', NS, { extraSans: ['127.0.0.1'] });

  await bootstrap(config, { store: new SecretStore(api, NS, 'warm-up'), injector, clock: systemClock, logger }); // JIT, connections
  const full: number[] = [];
  const again: number[] = [];
  for (let i = 0; i < runs; i++) {
    const store = () => new SecretStore(api, NS, `bench-${i}`);
    let t = performance.now();
    const first = await bootstrap(config, { store: store(), injector, clock: systemClock, logger });
    full.push(performance.now() - t);
    if (!first.actions.includes('bundle-injected') || !first.actions.includes('serving-stored'))
      throw new Error('not a full run');
    t = performance.now();
    const second = await bootstrap(config, { store: store(), injector, clock: systemClock, logger });
    again.push(performance.now() - t);
    if (second.changed) throw new Error('second run changed something');
  }

  const dirRuns: number[] = [];
  for (let i = 0; i < runs; i++) {
    const dir = await mkdtemp(join(tmpdir(), 'certs-bench-'));
    const t = performance.now();
    await bootstrap(config, { store: new DirectoryStore(dir), clock: systemClock, logger });
    dirRuns.push(performance.now() - t);
    await rm(dir, { recursive: true, force: true });
  }

  const cli: number[] = [];
  const cliRuns = Math.min(runs, 5);
  for (let i = 0; i < cliRuns; i++) {
    const t = performance.now();
    await promisify(execFile)(process.execPath, [
      join(repoRoot, 'cli/main.ts'),
      'certs',
      'bootstrap',
      '--service',
      'staticsite-webhook',
      '--namespace',
      NS,
      '--san',
      '127.0.0.1',
      '--secret',
      `cli-${i}`,
      '--webhook-config',
      CONFIG,
      '--crd',
      CRD_NAME,
      '--kubeconfig',
      cp.kubeconfigPath,
    ]);
    cli.push(performance.now() - t);
  }

  console.log(
    JSON.stringify(
      {
        node: process.version,
        cpus: `${cpus().length} x ${cpus()[0]?.model ?? '?'}`,
        keyBits: { ca: config.caKeyBits, serving: config.servingKeyBits },
        kubeConfigLoadMs,
        fullBootstrapInProcess: stats(full),
        idempotentSecondRun: stats(again),
        directoryOnly: stats(dirRuns),
        fullBootstrapCliProcess: stats(cli),
      },
      null,
      2,
    ),
  );
} finally {
  await cp.stop();
}
