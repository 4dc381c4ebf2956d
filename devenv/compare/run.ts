import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import jsonPatch from 'fast-json-patch';
import {
  buildCrd,
  CRD_NAME,
  type CrdOptions,
  DEFAULT_NAMESPACE,
  mutatingPolicy,
  mutatingPolicyBinding,
  policyParams,
  VALIDATING_POLICY_NAME,
  validatingPolicy,
  validatingPolicyBinding,
} from '../../api/index.ts';
import type { ControlPlane } from '../controlplane.ts';
import { eventually, installCrd, uninstallCrd } from '../crds.ts';
import type { KubeHttp, KubeResponse } from '../kube-http.ts';
import { ReviewClient } from '../review-client.ts';
import { loopbackCerts } from '../webhook-certs.ts';
import { MUTATING_CONFIGS, VALIDATING_CONFIGS, webhookConfigurations } from '../webhook-configs.ts';
import { WebhookProcess } from '../webhook-process.ts';
import type { CompareCase, WebhookOnlyBehaviour } from './corpus.ts';
import { type Aspect, type CaseResult, type Difference, MODES, type Mode, type Outcome } from './outcome.ts';
import { aspectValue, errorSet, type RuleRow, ruleTable } from './rules.ts';

const MODE_LIST = Object.keys(MODES) as Mode[];

export interface LatencySummary {
  samples: number;
  medianMs: number;
  p99Ms: number;
}

export interface Comparison {
  kubernetesVersion: string;
  cases: CaseResult[];
  latency: Record<Mode, LatencySummary>;
  /** Each rule against each way (rules.ts). */
  rules: RuleRow[];
}

const WEBHOOK_PREFIX = /^admission webhook "[^"]+" denied the request: /;
const CONFIG_NAME = 'staticsite-compare';
const namespaceOf = (mode: Mode) => `compare-${mode.toLowerCase()}`;

export function summarize(samples: number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
  return { samples: sorted.length, medianMs: +at(0.5).toFixed(2), p99Ms: +at(0.99).toFixed(2) };
}

function siteBody(c: CompareCase, object: Record<string, unknown>, namespace: string) {
  const metadata = { ...(object.metadata as Record<string, unknown>), namespace };
  return { apiVersion: `staticsite.dev/${c.version}`, kind: 'StaticSite', ...object, metadata };
}

function outcomeOf(res: KubeResponse, latencyMs: number): Outcome {
  const { status, text, warnings } = res;
  const b = (res.body ?? {}) as { message?: string; spec?: unknown; metadata?: { finalizers?: string[] } };
  const allowed = status >= 200 && status < 300;
  return {
    allowed,
    code: status,
    message: allowed ? '' : (b.message ?? text.trim()).replace(WEBHOOK_PREFIX, ''),
    warnings,
    spec: allowed ? b.spec : undefined,
    finalizers: allowed ? (b.metadata?.finalizers ?? []) : [],
    latencyMs,
  };
}

async function throughApiServer(admin: KubeHttp, c: CompareCase, namespace: string): Promise<Outcome> {
  const path = (version: string) => `/apis/staticsite.dev/${version}/namespaces/${namespace}/staticsites`;
  for (const setup of c.setup) {
    await admin.must('POST', path('v1'), siteBody({ ...c, version: 'v1' }, setup, namespace));
  }
  const query = c.fieldValidation ? { fieldValidation: c.fieldValidation } : {};
  const name = (c.object.metadata as { name: string }).name;
  if (c.old) {
    await admin.must('POST', path(c.version), siteBody(c, c.old, namespace));
    const live = await admin.must<{ metadata: { resourceVersion: string } }>('GET', `${path(c.version)}/${name}`);
    const body = siteBody(c, c.object, namespace);
    (body.metadata as Record<string, unknown>).resourceVersion = live.metadata.resourceVersion;
    const started = performance.now();
    const res = await admin.put(`${path(c.version)}/${name}`, body, { query });
    return outcomeOf(res, performance.now() - started);
  }
  const started = performance.now();
  const res = await admin.post(path(c.version), siteBody(c, c.object, namespace), { query });
  return outcomeOf(res, performance.now() - started);
}

/** What an AdmissionReview asks about: the operation, the object and (for an update) its old version. */
interface Change {
  operation: 'CREATE' | 'UPDATE';
  object: unknown;
  oldObject?: unknown;
}

function review(c: Pick<CompareCase, 'version' | 'fieldValidation'>, namespace: string, change: Change) {
  const { operation, object, oldObject } = change;
  const name = (object as { metadata: { name: string } }).metadata?.name;
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: { group: 'staticsite.dev', version: c.version, kind: 'StaticSite' },
      resource: { group: 'staticsite.dev', version: c.version, resource: 'staticsites' },
      name,
      namespace,
      operation,
      object,
      oldObject: oldObject ?? null,
      options: c.fieldValidation ? { fieldValidation: c.fieldValidation } : {},
    },
  };
}

/** Whether the webhook's cache knows a site with this hostname: another site claiming it is denied. */
async function hostnameHeld(client: ReviewClient, hostname: string, namespace: string): Promise<boolean> {
  const probe = {
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: { name: 'cache-probe', namespace },
    spec: { content: 'x', hostname },
  };
  const asked = review({ version: 'v1' }, namespace, { operation: 'CREATE', object: probe });
  const { response } = await client.post('/validate', asked);
  return !response.allowed && (response.status?.message ?? '').includes('Duplicate value');
}

/** Mutate then validate, the way the API server chains the two webhooks. */
async function direct(client: ReviewClient, c: CompareCase, namespace: string): Promise<Outcome> {
  const admitOnce = async (operation: 'CREATE' | 'UPDATE', object: Record<string, unknown>, old: unknown) => {
    const warnings: string[] = [];
    const toMutate = review(c, namespace, { operation, object, oldObject: old });
    const mutated = (await client.post('/mutate', toMutate)).response;
    warnings.push(...(mutated.warnings ?? []));
    if (!mutated.allowed) return { response: mutated, object, warnings };
    const patched = mutated.patch
      ? jsonPatch.applyPatch(structuredClone(object), JSON.parse(Buffer.from(mutated.patch, 'base64').toString('utf8')))
          .newDocument
      : object;
    const toValidate = review(c, namespace, { operation, object: patched, oldObject: old });
    const validated = (await client.post('/validate', toValidate)).response;
    warnings.push(...(validated.warnings ?? []));
    return { response: validated, object: patched, warnings };
  };
  let old: unknown;
  if (c.old) old = (await admitOnce('CREATE', siteBody(c, c.old, namespace), undefined)).object;
  const started = performance.now();
  const result = await admitOnce(c.old ? 'UPDATE' : 'CREATE', siteBody(c, c.object, namespace), old);
  const latencyMs = performance.now() - started;
  const { response } = result;
  if (!response.allowed) {
    return {
      allowed: false,
      code: response.status?.code ?? 403,
      message: response.status?.message ?? '',
      warnings: result.warnings,
      spec: undefined,
      finalizers: [],
      latencyMs,
    };
  }
  const object = result.object as { spec?: unknown; metadata?: { finalizers?: string[] } };
  return {
    allowed: true,
    code: c.old ? 200 : 201,
    message: '',
    warnings: result.warnings,
    spec: object.spec,
    finalizers: object.metadata?.finalizers ?? [],
    latencyMs,
  };
}

const POLICY_DENIAL =
  /^(.*) is forbidden: ValidatingAdmissionPolicy '[^']+' with binding '[^']+' denied request: (.*)$/;

/** A 422 message without the error the scale subresource's replicas path adds (one error left: no brackets). */
function withoutScaleCheck(message: string): string {
  const stripped = message.replace(
    /, \.spec\.replicas: Invalid value: [^\]]*?accessor error: [^\]]*?, expected \w+/,
    '',
  );
  return stripped.replace(/^(.* is invalid: )\[([^,\]]*)\]$/, '$1$2');
}

/** Which documented behaviour explains that `mode` differs from A on `aspect`, if any. */
function explain(
  c: CompareCase,
  aspect: Aspect,
  mode: Mode,
  outcomes: Record<Mode, Outcome>,
): WebhookOnlyBehaviour | undefined {
  const has = (b: WebhookOnlyBehaviour) => c.webhookOnly.includes(b);
  if (aspect === 'finalizers') return 'finalizer';
  if (has('conversion') && !outcomes.A.allowed && outcomes.A.code === 404) return 'conversion';
  if (has('duplicate-hostname') && (aspect === 'verdict' || aspect === 'message' || aspect === 'spec'))
    return 'duplicate-hostname';
  if (has('hostname-default') && aspect === 'spec') return 'hostname-default';
  if (aspect !== 'message') return undefined;
  // E's CRD has no CEL rules either: where the schema refuses the object, the policy is never reached
  // and E answers as B does.
  if (mode === 'E' && outcomes.E.message === outcomes.B.message && outcomes.B.message !== outcomes.A.message) {
    return explain(c, aspect, 'B', outcomes);
  }
  if (mode === 'E' && errorSet(outcomes.E.message) === errorSet(withoutScaleCheck(outcomes.B.message))) {
    return 'no-scale';
  }
  if (mode === 'E') {
    const denial = POLICY_DENIAL.exec(outcomes.E.message);
    const rule = denial?.[2] ?? '';
    if (denial && rule !== '' && outcomes.A.message.includes(`: ${rule}`)) return 'policy-message';
    return undefined;
  }
  if (has('cel-note') && (mode === 'B' || mode === 'D')) {
    const strip = (s: string) =>
      errorSet(s.replace(/, <nil>: Invalid value: null: some validation rules were not checked[^\]]*/, '')).replace(
        /^(.* is invalid: )\[(.*)\]$/,
        '$1$2',
      );
    if (strip(outcomes.A.message) === strip(outcomes[mode].message)) return 'cel-note';
  }
  return undefined;
}

/** Where each way differs from A, the modes grouped by the behaviour that explains them. */
export function differencesOf(c: CompareCase, outcomes: Record<Mode, Outcome>): Difference[] {
  const differences: Difference[] = [];
  for (const aspect of ['verdict', 'message', 'warnings', 'spec', 'finalizers'] as Aspect[]) {
    const base = aspectValue(outcomes.A, aspect);
    const groups = new Map<WebhookOnlyBehaviour | undefined, Mode[]>();
    for (const mode of MODE_LIST) {
      if (mode === 'A' || aspectValue(outcomes[mode], aspect) === base) continue;
      const behaviour = explain(c, aspect, mode, outcomes);
      groups.set(behaviour, [...(groups.get(behaviour) ?? []), mode]);
    }
    for (const [behaviour, modes] of groups) differences.push({ aspect, modes, behaviour });
  }
  return differences;
}

async function latencyLoop(samples: number, once: (i: number) => Promise<void>): Promise<LatencySummary> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    await once(i);
    times.push(performance.now() - started);
  }
  return summarize(times);
}

function crdFor(mode: Exclude<Mode, 'D'>, conversionClientConfig: CrdOptions['conversionClientConfig']) {
  if (mode === 'A' || mode === 'F') return buildCrd({ schemaOnly: true });
  if (mode === 'E') return buildCrd({ schemaOnly: true, withoutCelRules: true, withoutScale: true });
  return buildCrd({ withoutCelRules: mode === 'B', conversionClientConfig });
}

const POLICIES = '/apis/admissionregistration.k8s.io/v1';

/**
 * Installs what a way admits with besides its CRD (webhook configurations for B and C, policies for E
 * and F), waits until the API server applies it, and returns how to remove it again.
 */
async function installAdmission(
  cp: ControlPlane,
  mode: Exclude<Mode, 'D'>,
  namespace: string,
  webhook: WebhookAddress,
): Promise<() => Promise<void>> {
  const admin = cp.admin;
  const probe = (spec: Record<string, unknown>) =>
    admin.post<{ metadata?: { finalizers?: string[] }; message?: string }>(
      `/apis/staticsite.dev/v1/namespaces/${namespace}/staticsites`,
      { apiVersion: 'staticsite.dev/v1', kind: 'StaticSite', metadata: { name: 'probe' }, spec },
      { query: { dryRun: 'All' } },
    );
  const created: string[] = [];
  const create = async (path: string, body: { metadata: { name: string } }) => {
    await admin.must('POST', path, body);
    created.unshift(`${path}/${body.metadata.name}`);
  };
  // Deleted objects leave the API server's admission a moment later: wait until the probe answers as
  // with no admission at all, so the next way never meets this one's webhooks or policies.
  const removeAll = async () => {
    for (const path of created) await admin.delete(path);
    if (mode === 'E') {
      await eventually('validating policy gone', async () => {
        const res = await probe({ content: 'x', tier: 'prod', replicas: 1 });
        return !res.body.message?.includes('ValidatingAdmissionPolicy');
      });
    } else if (mode !== 'A') {
      await eventually(
        'mutations gone',
        async () => (await probe({ content: 'x' })).body.metadata?.finalizers === undefined,
      );
    }
  };
  if (mode === 'B' || mode === 'C') {
    const { mutating, validating } = webhookConfigurations(webhook.url, webhook.caBundle, CONFIG_NAME);
    await create(MUTATING_CONFIGS, mutating);
    await create(VALIDATING_CONFIGS, validating);
    await eventually(
      'webhooks active',
      async () => (await probe({ content: 'x' })).body.metadata?.finalizers !== undefined,
    );
  } else if (mode === 'E') {
    await create(`${POLICIES}/validatingadmissionpolicies`, validatingPolicy());
    await create(`${POLICIES}/validatingadmissionpolicybindings`, validatingPolicyBinding());
    await eventually('validating policy active', async () =>
      (await probe({ content: 'x', tier: 'prod', replicas: 1 })).body.message?.includes('ValidatingAdmissionPolicy'),
    );
    // The API server type-checks the expressions against the CRD's schema: a warning means a rule that
    // cannot work as written.
    const typeChecking = await eventually('validating policy type-checked', async () => {
      const policy = await admin.must<{ status?: { typeChecking?: { expressionWarnings?: unknown[] } } }>(
        'GET',
        `${POLICIES}/validatingadmissionpolicies/${VALIDATING_POLICY_NAME}`,
      );
      return policy.status?.typeChecking;
    });
    if ((typeChecking.expressionWarnings ?? []).length > 0) {
      throw new Error(`the validating policy does not type-check: ${JSON.stringify(typeChecking.expressionWarnings)}`);
    }
  } else if (mode === 'F') {
    await cp.ensureNamespace(DEFAULT_NAMESPACE);
    await create(`/api/v1/namespaces/${DEFAULT_NAMESPACE}/configmaps`, policyParams());
    await create(`${POLICIES}/mutatingadmissionpolicies`, mutatingPolicy());
    await create(`${POLICIES}/mutatingadmissionpolicybindings`, mutatingPolicyBinding());
    await eventually(
      'mutating policy active',
      async () => (await probe({ content: 'x' })).body.metadata?.finalizers !== undefined,
    );
  }
  return removeAll;
}

async function clearNamespace(admin: KubeHttp, namespace: string): Promise<void> {
  const path = `/apis/staticsite.dev/v1/namespaces/${namespace}/staticsites`;
  const list = await admin.get<{ items?: Array<{ metadata: { name: string } }> }>(path);
  for (const item of list.body.items ?? []) {
    await admin.patch(`${path}/${item.metadata.name}`, { metadata: { finalizers: null } });
  }
}

export interface CompareOptions {
  latencySamples?: number;
  log?: (line: string) => void;
}

/** Where the API server reaches the webhook, and the CA bundle it trusts it with. */
interface WebhookAddress {
  url: string;
  caBundle: string;
}

/** What every way's run shares, and what the ways answered so far. */
interface Run {
  cp: ControlPlane;
  corpus: CompareCase[];
  samples: number;
  log: (line: string) => void;
  webhook: WebhookAddress;
  client: ReviewClient;
  outcomes: Map<string, Partial<Record<Mode, Outcome>>>;
  latency: Partial<Record<Mode, LatencySummary>>;
}

/** Runs every case each way (A to F) on a running control plane and collects what each way answered. */
export async function runComparison(
  cp: ControlPlane,
  corpus: CompareCase[],
  options: CompareOptions = {},
): Promise<Comparison> {
  const admin = cp.admin;
  const certs = await loopbackCerts();
  // The webhook's StaticSite cache needs the resource to exist before it can sync.
  await installCrd(admin, crdFor('A', undefined));
  // The shipped webhook, as a process of the built CLI (what the image runs), with the cross-object rule on.
  const webhook = await WebhookProcess.start({
    certDir: certs.dir,
    kubeconfig: cp.kubeconfigPath,
    baseDomain: 'sites.staticsite.dev',
  });
  const run: Run = {
    cp,
    corpus,
    samples: options.latencySamples ?? 100,
    log: options.log ?? (() => {}),
    webhook: { url: webhook.url, caBundle: certs.caBundle },
    client: new ReviewClient(webhook.url, certs.ca.certPem),
    outcomes: new Map(corpus.map((c) => [c.name, {}])),
    latency: {},
  };
  const version = await admin.must<{ gitVersion: string }>('GET', '/version');
  try {
    for (const mode of ['A', 'B', 'C', 'E', 'F'] as const) await runWay(run, mode);
  } finally {
    run.client.close();
    await webhook.stop();
    await rm(certs.dir, { recursive: true, force: true });
  }
  const cases = corpus.map((testCase) => {
    const o = run.outcomes.get(testCase.name) as Record<Mode, Outcome>;
    return { testCase, outcomes: o, differences: differencesOf(testCase, o) };
  });
  return {
    kubernetesVersion: version.gitVersion,
    cases,
    latency: run.latency as Record<Mode, LatencySummary>,
    rules: ruleTable(cases, MODE_LIST),
  };
}

/** One way through the API server: its CRD and admission in a namespace of its own, every case, its latency (and D after C). */
async function runWay(run: Run, mode: Exclude<Mode, 'D'>): Promise<void> {
  const { cp, corpus, webhook } = run;
  const admin = cp.admin;
  const namespace = namespaceOf(mode);
  run.log(`${mode}: ${MODES[mode]}`);
  await cp.ensureNamespace(namespace);
  await installCrd(admin, crdFor(mode, { url: `${webhook.url}/convert`, caBundle: webhook.caBundle }));
  const uninstallAdmission = await installAdmission(cp, mode, namespace, webhook);
  try {
    for (const c of corpus) {
      const slot = run.outcomes.get(c.name) as Partial<Record<Mode, Outcome>>;
      slot[mode] = await throughApiServer(admin, c, namespace);
    }
    run.latency[mode] = await latencyLoop(run.samples, async (i) => {
      await admin.must(
        'POST',
        `/apis/staticsite.dev/v1/namespaces/${namespace}/staticsites`,
        {
          apiVersion: 'staticsite.dev/v1',
          kind: 'StaticSite',
          metadata: { name: `latency-${i}` },
          spec: { content: 'x', hostname: `latency-${i}.example.com` },
        },
        { query: { dryRun: 'All' } },
      );
    });
    // D asks the same webhook while C's objects exist, so the unique-hostname rule sees the same cluster.
    if (mode === 'C') await runDirect(run, namespace);
  } finally {
    // Finalizers first, while the admission objects still answer (the mutating policy denies
    // every write once its parameters are gone).
    await clearNamespace(admin, namespace);
    await uninstallAdmission();
    await uninstallCrd(admin, CRD_NAME);
  }
}

/** D: every case asked of the webhook directly, once its cache holds the objects C left in `namespace`. */
async function runDirect(run: Run, namespace: string): Promise<void> {
  const { corpus, client } = run;
  run.log(`D: ${MODES.D}`);
  const held = corpus.flatMap((c) => c.setup.map((o) => (o.spec as { hostname?: string }).hostname ?? ''));
  await eventually(
    "the webhook's cache holds C's objects",
    async () => (await Promise.all(held.map((h) => h === '' || hostnameHeld(client, h, namespace)))).every(Boolean),
    60_000,
  );
  for (const c of corpus) {
    const slot = run.outcomes.get(c.name) as Partial<Record<Mode, Outcome>>;
    slot.D = await direct(client, c, namespace);
  }
  const valid = corpus.find((c) => c.name === 'minimal-dev') ?? corpus[0];
  run.latency.D = await latencyLoop(run.samples, async () => {
    if (valid) {
      const object = siteBody(valid, valid.object, namespace);
      await client.post('/validate', review(valid, namespace, { operation: 'CREATE', object }));
    }
  });
}
