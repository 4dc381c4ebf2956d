/**
 * A coverage-guided fuzzer for the shipped webhook: the built CLI (`node dist/bin/staticsite.js
 * webhook`, its review workers as they ship) runs under its inspector; every input is a review
 * mutated from the corpus, posted over HTTPS, and kept in the corpus when V8's block coverage of
 * the process (where ordinary reviews are decided) or of a review worker (where large ones are)
 * shows something that never ran before. Jazzer.js would do
 * this natively, but its prebuilt fuzzer needs a newer glibc than Debian 12's; V8's precise
 * coverage needs nothing but Node.
 *
 * A finding is any answer that shows a review got the better of the webhook: the process died or
 * stopped answering, an HTTP 5xx, a review stopped at its deadline or its worker's heap, or an
 * answer for another uid. Each is written to `findingsDir` as a replayable case.
 */
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { packageRoot } from '../../cli/package-root.ts';
import { freePort } from '../ports.ts';
import { ReviewClient } from '../review-client.ts';
import { type LoopbackCerts, loopbackCerts } from '../webhook-certs.ts';
import { WebhookProcess } from '../webhook-process.ts';
import { bundleDictionary, corpusWords, parsedJson, seedReviewFiles, seedStreams } from './corpus.ts';
import { type FuzzCase, type FuzzOptions, type FuzzReport, fuzz, type Problem } from './fuzz-loop.ts';
import { CoverageClient } from './inspector.ts';
import { type Json, mutateJson, mutateText } from './mutations.ts';

/** The API server gives our webhooks 5 s a call: an answer that takes longer is no answer to it. */
const SLOW_MS = 5_000;
/** A request not answered by then fails, and the process is started again. */
const NO_ANSWER_MS = 15_000;
/** Beyond the API server's 3 MiB request limit, with room for what it would refuse. */
const MAX_BYTES = 6 * 1024 * 1024;

/** The path a review goes to: its kind decides; a damaged one goes where it came from. */
function pathOf(review: Json, fallback: string): string {
  const kind = review !== null && typeof review === 'object' && !Array.isArray(review) ? review.kind : undefined;
  if (kind === 'ConversionReview') return '/convert';
  if (kind === 'AdmissionReview') return fallback === '/convert' ? '/validate' : fallback;
  return fallback;
}

/** The objects a review carries: request.object and oldObject, or a conversion's objects. */
function objectsOf(doc: Json): Json[] {
  const request = doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? doc.request : undefined;
  if (request === null || typeof request !== 'object' || Array.isArray(request)) return [];
  const found: Json[] = [];
  for (const key of ['object', 'oldObject']) {
    const value = request[key];
    if (value !== null && typeof value === 'object') found.push(value);
  }
  if (Array.isArray(request.objects))
    for (const o of request.objects) if (o !== null && typeof o === 'object') found.push(o);
  return found;
}

function uidOf(body: string): string | undefined {
  const uid = (parsedJson(body) as { request?: { uid?: unknown } } | null | undefined)?.request?.uid;
  return typeof uid === 'string' && uid !== '' ? uid : undefined;
}

/** The shipped webhook under its inspector, with a coverage session on it and its workers. */
class WebhookTarget {
  readonly webhook: WebhookProcess;
  readonly client: ReviewClient;
  readonly coverage: CoverageClient;

  private constructor(webhook: WebhookProcess, client: ReviewClient, coverage: CoverageClient) {
    this.webhook = webhook;
    this.client = client;
    this.coverage = coverage;
  }

  static async start(certs: LoopbackCerts): Promise<WebhookTarget> {
    const inspectPort = await freePort();
    const webhook = await WebhookProcess.start({
      certDir: certs.dir,
      nodeArgs: [`--inspect=127.0.0.1:${inspectPort}`],
    });
    // Review workers attach as large reviews start them (the one started with the process stops once ready).
    const coverage = await CoverageClient.attach(inspectPort, (script) => script.includes('/dist/bin/'));
    return new WebhookTarget(webhook, new ReviewClient(webhook.url, certs.ca.certPem, NO_ANSWER_MS), coverage);
  }

  async stop(): Promise<void> {
    this.coverage.close();
    this.client.close();
    await this.webhook.stop();
  }
}

/** The seed corpus: every review file, each posted to the paths it fits. */
function seedCases(files: string[]): FuzzCase[] {
  const cases: FuzzCase[] = [];
  for (const file of files) {
    const body = readFileSync(file, 'utf8');
    const review = JSON.parse(body) as Json;
    const path = pathOf(review, '/validate');
    cases.push({ path, body });
    if (path === '/validate') cases.push({ path: '/mutate', body });
  }
  return cases;
}

/** A CREATE review of `object`, as the API server sends one for its apiVersion. */
function createReview(object: Json, index: number): string {
  const apiVersion = (object as { apiVersion?: unknown } | null)?.apiVersion;
  const version = typeof apiVersion === 'string' ? (apiVersion.split('/')[1] ?? 'v1') : 'v1';
  const metadata = (object as { metadata?: { name?: unknown; namespace?: unknown } } | null)?.metadata;
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
      kind: { group: 'staticsite.dev', version, kind: 'StaticSite' },
      resource: { group: 'staticsite.dev', version, resource: 'staticsites' },
      name: metadata?.name,
      namespace: metadata?.namespace,
      operation: 'CREATE',
      userInfo: { username: 'fuzzer' },
      object,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  });
}

/** The CREATE reviews of every object in the streams, to both admission paths. */
function objectSeedCases(streams: readonly string[]): FuzzCase[] {
  return streams
    .flatMap((stream) => loadAll(stream) as Json[])
    .flatMap((object, index) => {
      const body = createReview(object, index);
      return [
        { path: '/validate', body },
        { path: '/mutate', body },
      ];
    });
}

/** What an answer shows of a review that got the better of the webhook. */
function problemsOf(input: FuzzCase, status: number, text: string, ms: number): Problem[] {
  const problems: Problem[] = [];
  if (ms > SLOW_MS) problems.push({ kind: 'slow', detail: `answered in ${ms.toFixed(0)} ms` });
  if (status >= 500) problems.push({ kind: 'http-5xx', detail: `HTTP ${status}: ${text.slice(0, 300)}` });
  const uid = uidOf(input.body);
  if (status === 200 && uid !== undefined) {
    const answered = (JSON.parse(text) as { response?: { uid?: unknown } }).response?.uid;
    if (answered !== uid) problems.push({ kind: 'wrong-uid', detail: `answered ${String(answered).slice(0, 80)}` });
  }
  // The review pool's own words for a review it stopped (webhook/isolation/review-pool.ts).
  if (text.includes('the webhook stopped reviewing this object after'))
    problems.push({ kind: 'deadline', detail: text.slice(0, 300) });
  if (text.includes('the webhook ran out of memory reviewing this object'))
    problems.push({ kind: 'memory', detail: text.slice(0, 300) });
  return problems;
}

/** Fuzzes the webhook from the review fixtures and a CREATE review of each object of the seed streams. */
export async function fuzzWebhook(options: FuzzOptions): Promise<FuzzReport> {
  const seeds = [...seedCases(seedReviewFiles()), ...objectSeedCases(seedStreams())];
  const dictionary = [
    ...new Set([
      ...bundleDictionary(join(packageRoot(), 'dist', 'bin')),
      ...corpusWords(seeds.map((c) => parsedJson(c.body) ?? null)),
    ]),
  ];
  const certs = await loopbackCerts();
  try {
    return await fuzz(options, {
      seeds,
      maxBytes: MAX_BYTES,
      start: () => WebhookTarget.start(certs),
      run: async (target, input) => {
        const sent = performance.now();
        try {
          const { status, text } = await target.client.raw(input.path, input.body);
          return { status: String(status), problems: problemsOf(input, status, text, performance.now() - sent) };
        } catch (error) {
          const kind = target.webhook.process.running ? 'no-answer' : 'crash';
          return { status: kind, problems: [{ kind, detail: (error as Error).message }], lost: true };
        }
      },
      mutate: (rand, from, donorCase) => {
        let doc = parsedJson(from.body);
        if (doc === undefined) return { path: from.path, body: mutateText(rand, from.body) };
        const pick = <X>(xs: readonly X[]): X => xs[Math.floor(rand() * xs.length)] as X;
        const donor = parsedJson(donorCase.body) ?? null;
        for (let n = 1 + Math.floor(rand() * 4); n > 0; n--) {
          // Mostly inside the objects under review, where the engine works; the envelope now and then.
          const objects = objectsOf(doc);
          if (objects.length > 0 && rand() < 0.8) mutateJson(rand, pick(objects), donor, dictionary);
          else doc = mutateJson(rand, doc, donor, dictionary);
        }
        const body = JSON.stringify(doc) ?? 'null';
        return { path: pathOf(doc, from.path), body: rand() < 0.08 ? mutateText(rand, body) : body };
      },
    });
  } finally {
    await rm(certs.dir, { recursive: true, force: true });
  }
}
