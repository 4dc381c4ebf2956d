/**
 * The two clients of the upgrade drill: one creates, edits and deletes StaticSites through the API
 * server (so through both webhooks) and tallies every answer by what decided it; the other GETs every
 * steady site (through the gateway, or its Service) and looks its name up in DNS, counting what failed.
 */
import type { KubeHttp, KubeResponse } from '../../../devenv/kube-http.ts';

export interface SteadySite {
  name: string;
  /** Its hostname: what the gateway routes and DNS answers. */
  host: string;
  /** The HTML it serves. */
  html: string;
}

export interface TrafficOptions {
  admin: KubeHttp;
  namespace: string;
  /** The churned sites are `<prefix>-<n>`. */
  prefix: string;
  /** Sites that exist throughout: served and resolved on every round. */
  steady: SteadySite[];
  /** GET / for a steady site's hostname (at the gateway, or at its Service); undefined when nothing answered. */
  get: (host: string) => Promise<{ status: number; body: string } | undefined>;
  /** The A records DNS answers for a hostname; without it, no lookups. */
  resolve?: (host: string) => Promise<string[]>;
  /** The address every record must point at: the gateway's. */
  address?: string;
}

export interface TrafficReport {
  /** `<verb> <outcome>` → how many: `create ok`, `create denied: duplicate hostname (webhook)`, ... */
  admission: Record<string, number>;
  /** Every answer that was neither the success nor the rule's denial expected, with when (ms into the run). */
  admissionFailures: string[];
  gets: number;
  getFailures: string[];
  lookups: number;
  lookupFailures: string[];
  /** The churned sites the client created (and then deleted). */
  churned: string[];
}

const FINALIZER = 'staticsite.dev/external-record';

export type Expected = { ok: number[]; mutated?: boolean } | { denied: string; by: string[] };

/** The tally key of one answer, or a failure: anything but the success or the denial expected. */
export function judge(
  verb: string,
  res: KubeResponse | undefined,
  expected: Expected,
): { key: string; failure?: string } {
  if (res === undefined) return { key: `${verb} no answer`, failure: 'no answer' };
  if ('ok' in expected) {
    const finalizers = (res.body as { metadata?: { finalizers?: string[] } } | undefined)?.metadata?.finalizers;
    if (!expected.ok.includes(res.status)) return { key: `${verb} ${res.status}`, failure: res.text.slice(0, 300) };
    // The finalizer comes only from the mutating webhook: without it the write skipped admission.
    if (expected.mutated && !finalizers?.includes(FINALIZER)) {
      return { key: `${verb} not mutated`, failure: 'admitted without the mutating webhook' };
    }
    return { key: `${verb} ok` };
  }
  const key = `${verb} denied: ${expected.denied}`;
  if (res.status === 422 && expected.by.every((s) => res.text.includes(s))) return { key };
  return { key: `${verb} ${res.status} (expected: ${expected.denied})`, failure: res.text.slice(0, 300) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Tally {
  readonly report: TrafficReport = {
    admission: {},
    admissionFailures: [],
    gets: 0,
    getFailures: [],
    lookups: 0,
    lookupFailures: [],
    churned: [],
  };
  private readonly started = Date.now();

  at(): string {
    return `+${Date.now() - this.started} ms`;
  }

  answer(verb: string, what: string, res: KubeResponse | undefined, expected: Expected): void {
    const { key, failure } = judge(verb, res, expected);
    this.report.admission[key] = (this.report.admission[key] ?? 0) + 1;
    if (failure) this.report.admissionFailures.push(`${this.at()} ${verb} ${what}: ${failure}`);
  }
}

async function send(request: () => Promise<KubeResponse>): Promise<KubeResponse | undefined> {
  return request().catch(() => undefined);
}

/** One round of the writing client: a site created, edited, a write each rule refuses, the site deleted. */
async function churnOnce(options: TrafficOptions, tally: Tally, n: number): Promise<void> {
  const { admin, namespace, prefix, steady } = options;
  const sites = `/apis/staticsite.dev/v1/namespaces/${namespace}/staticsites`;
  const name = `${prefix}-${n}`;
  const site = (metadataName: string, spec: Record<string, unknown>) => ({
    apiVersion: 'staticsite.dev/v1',
    kind: 'StaticSite',
    metadata: { name: metadataName },
    spec: { content: `<p>${metadataName}</p>`, ...spec },
  });
  const created = await send(() => admin.post(sites, site(name, {})));
  tally.answer('create', name, created, { ok: [201], mutated: true });
  if (created?.status === 201) tally.report.churned.push(name);
  const edited = await send(() => admin.patch(`${sites}/${name}`, { spec: { content: `<p>${name} edited</p>` } }));
  tally.answer('update', name, edited, { ok: [200], mutated: true });
  const taken = steady[n % steady.length]?.host ?? '';
  const duplicate = await send(() => admin.post(sites, site(`${name}-dup`, { hostname: taken })));
  tally.answer('create', `${name}-dup`, duplicate, {
    denied: 'duplicate hostname (webhook)',
    by: ['admission webhook', 'spec.hostname: Duplicate value'],
  });
  const prod = await send(() => admin.post(sites, site(`${name}-prod`, { tier: 'prod', replicas: 1 })));
  tally.answer('create', `${name}-prod`, prod, {
    denied: 'prod needs 2 replicas (CEL)',
    by: ['prod sites need at least 2 replicas'],
  });
  const deleted = await send(() => admin.delete(`${sites}/${name}`));
  tally.answer('delete', name, deleted, { ok: [200, 202] });
}

/** One round of the reading client: every steady site through the gateway, and its name in DNS. */
async function readOnce(options: TrafficOptions, tally: Tally): Promise<void> {
  const { report } = tally;
  for (const site of options.steady) {
    const res = await options.get(site.host).catch(() => undefined);
    report.gets++;
    if (res?.status !== 200 || res.body !== site.html) {
      const got = res ? `${res.status} ${res.body.slice(0, 80)}` : 'no answer';
      report.getFailures.push(`${tally.at()} GET ${site.host}: ${got}`);
    }
    if (!options.resolve) continue;
    const answers = await options.resolve(site.host).catch((error: Error) => [error.message]);
    report.lookups++;
    if (!answers.includes(options.address ?? '')) {
      report.lookupFailures.push(`${tally.at()} ${site.host} A: ${JSON.stringify(answers)}`);
    }
  }
}

/** Starts both clients; `stop` ends them after their current round and returns what they counted. */
export function startTraffic(options: TrafficOptions): { stop: () => Promise<TrafficReport> } {
  const tally = new Tally();
  let running = true;
  const writer = (async () => {
    for (let n = 0; running; n++) {
      await churnOnce(options, tally, n);
      await sleep(250);
    }
  })();
  const reader = (async () => {
    while (running) {
      await readOnce(options, tally);
      await sleep(100);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await Promise.all([writer, reader]);
      return tally.report;
    },
  };
}
