/**
 * A coverage-guided fuzzer for the shipped webhook: the built CLI (`node dist/bin/staticsite.js
 * webhook`, its review workers as they ship) runs under its inspector; every input is a review
 * mutated from the corpus, posted over HTTPS, and kept in the corpus when V8's block coverage of
 * the process or of a review worker shows something that never ran before. Jazzer.js would do
 * this natively, but its prebuilt fuzzer needs a newer glibc than Debian 12's; V8's precise
 * coverage needs nothing but Node.
 *
 * A finding is any answer that shows a review got the better of the webhook: the process died or
 * stopped answering, an HTTP 5xx, a review stopped at its deadline or its worker's heap, or an
 * answer for another uid. Each is written to `findingsDir` as a replayable case.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageRoot } from '../package-root.ts';
import { freePort } from '../ports.ts';
import { ReviewClient } from '../review-client.ts';
import { type LoopbackCerts, loopbackCerts } from '../webhook-certs.ts';
import { WebhookProcess } from '../webhook-process.ts';
import { CoverageClient } from './inspector.ts';
import { type Json, mutateJson, mutateText, random } from './mutations.ts';

export type FuzzPath = '/mutate' | '/validate' | '/convert';

export interface FuzzCase {
  path: FuzzPath;
  body: string;
}

export type FindingKind = 'crash' | 'no-answer' | 'slow' | 'http-5xx' | 'deadline' | 'memory' | 'wrong-uid';

export interface Finding extends FuzzCase {
  kind: FindingKind;
  detail: string;
}

export interface FuzzOptions {
  seed: number;
  seconds: number;
  /** The seeds: review files (AdmissionReview or ConversionReview JSON). */
  seedFiles: string[];
  /** Where findings are written (one JSON file each); none: kept in the report only. */
  findingsDir?: string;
  /** Told of progress about every 10 s. */
  progress?: (line: string) => void;
}

export interface FuzzReport {
  seed: number;
  seconds: number;
  executions: number;
  executionsPerSecond: number;
  corpus: number;
  features: number;
  statuses: Record<string, number>;
  findings: Finding[];
}

/** The API server gives our webhooks 5 s a call: an answer that takes longer is no answer to it. */
const SLOW_MS = 5_000;
/** A request not answered by then fails, and the process is started again. */
const NO_ANSWER_MS = 15_000;

/** The path a review goes to: its kind decides; a damaged one goes where it came from. */
function pathOf(review: Json, fallback: FuzzPath): FuzzPath {
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

function parsed(body: string): Json | undefined {
  try {
    return JSON.parse(body) as Json;
  } catch {
    return undefined;
  }
}

function uidOf(body: string): string | undefined {
  try {
    const uid = (JSON.parse(body) as { request?: { uid?: unknown } } | null)?.request?.uid;
    return typeof uid === 'string' && uid !== '' ? uid : undefined;
  } catch {
    return undefined;
  }
}

/** The shipped webhook under its inspector, with a coverage session on it and its workers. */
class Target {
  readonly webhook: WebhookProcess;
  readonly client: ReviewClient;
  readonly coverage: CoverageClient;

  private constructor(webhook: WebhookProcess, client: ReviewClient, coverage: CoverageClient) {
    this.webhook = webhook;
    this.client = client;
    this.coverage = coverage;
  }

  static async start(certs: LoopbackCerts): Promise<Target> {
    const inspectPort = await freePort();
    const webhook = await WebhookProcess.start({
      certDir: certs.dir,
      nodeArgs: [`--inspect=127.0.0.1:${inspectPort}`],
    });
    const targets = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as Array<{
      webSocketDebuggerUrl: string;
    }>;
    const url = targets[0]?.webSocketDebuggerUrl;
    if (url === undefined) throw new Error('the webhook has no inspector target');
    const coverage = await CoverageClient.connect(url, (script) => script.includes('/dist/bin/'));
    const deadline = Date.now() + 10_000;
    while (coverage.workerCount < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return new Target(webhook, new ReviewClient(webhook.url, certs.ca.certPem, NO_ANSWER_MS), coverage);
  }

  async stop(): Promise<void> {
    this.coverage.close();
    this.client.close();
    await this.webhook.stop();
  }
}

/** The seed corpus: every review file, each posted to the paths it fits. */
export function seedCases(files: string[]): FuzzCase[] {
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

/**
 * The string literals of the code under test (the built bundle): field names, enum values, words
 * its comparisons look for. Block coverage cannot see how close a value came to one; a dictionary
 * gives the mutations the words to try.
 */
export function bundleDictionary(dir: string): string[] {
  const words = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.js'))) {
    for (const match of readFileSync(join(dir, file), 'utf8').matchAll(/["'`]([A-Za-z][\w./:-]{1,40})["'`]/g)) {
      words.add(match[1] as string);
    }
  }
  return [...words].sort();
}

/** The keys and short strings of the seed reviews. */
function corpusWords(cases: FuzzCase[]): string[] {
  const words = new Set<string>();
  const walk = (value: Json) => {
    if (typeof value === 'string' && value.length <= 64) words.add(value);
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) value.forEach(walk);
    else
      for (const [key, child] of Object.entries(value)) {
        words.add(key);
        walk(child);
      }
  };
  for (const c of cases) walk(parsed(c.body) ?? null);
  return [...words];
}

/** Every `.json` file directly under each directory. */
export function jsonFilesUnder(...dirs: string[]): string[] {
  return dirs.flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => join(dir, f)),
  );
}

export async function fuzzWebhook(options: FuzzOptions): Promise<FuzzReport> {
  const rand = random(options.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const corpus = seedCases(options.seedFiles);
  const dictionary = [...new Set([...bundleDictionary(join(packageRoot(), 'dist', 'bin')), ...corpusWords(corpus)])];
  const seen = new Set<string>();
  const statuses: Record<string, number> = {};
  const findings: Finding[] = [];
  const certs = await loopbackCerts();
  if (options.findingsDir) await mkdir(options.findingsDir, { recursive: true });
  let target = await Target.start(certs);
  let executions = 0;
  const started = Date.now();
  let lastProgress = started;

  const found = async (finding: Finding) => {
    findings.push(finding);
    if (options.findingsDir) {
      const file = join(options.findingsDir, `${finding.kind}-${options.seed}-${executions}.json`);
      await writeFile(file, `${JSON.stringify({ kind: finding.kind, path: finding.path, body: finding.body })}\n`);
    }
  };

  const mutate = (from: FuzzCase): FuzzCase => {
    let doc = parsed(from.body);
    if (doc === undefined) return { path: from.path, body: mutateText(rand, from.body) };
    const donor = parsed(pick(corpus).body) ?? null;
    for (let n = 1 + Math.floor(rand() * 4); n > 0; n--) {
      // Mostly inside the objects under review, where the engine works; the envelope now and then.
      const objects = objectsOf(doc);
      if (objects.length > 0 && rand() < 0.8) mutateJson(rand, pick(objects), donor, dictionary);
      else doc = mutateJson(rand, doc, donor, dictionary);
    }
    const body = JSON.stringify(doc) ?? 'null';
    return { path: pathOf(doc, from.path), body: rand() < 0.08 ? mutateText(rand, body) : body };
  };

  const execute = async (input: FuzzCase): Promise<boolean> => {
    executions++;
    let status: number;
    let text: string;
    const sent = performance.now();
    try {
      ({ status, text } = await target.client.raw(input.path, input.body));
    } catch (error) {
      const alive = target.webhook.process.running;
      await found({ ...input, kind: alive ? 'no-answer' : 'crash', detail: (error as Error).message });
      await target.stop();
      target = await Target.start(certs);
      return false;
    }
    const ms = performance.now() - sent;
    if (ms > SLOW_MS) await found({ ...input, kind: 'slow', detail: `answered in ${ms.toFixed(0)} ms` });
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status >= 500) await found({ ...input, kind: 'http-5xx', detail: `HTTP ${status}: ${text.slice(0, 300)}` });
    const uid = uidOf(input.body);
    if (status === 200 && uid !== undefined) {
      const answered = (JSON.parse(text) as { response?: { uid?: unknown } }).response?.uid;
      if (answered !== uid)
        await found({ ...input, kind: 'wrong-uid', detail: `answered ${String(answered).slice(0, 80)}` });
    }
    // The review pool's own words for a review it stopped (webhook/isolation/review-pool.ts).
    if (text.includes('the webhook stopped reviewing this object after')) {
      await found({ ...input, kind: 'deadline', detail: text.slice(0, 300) });
    }
    if (text.includes('the webhook ran out of memory reviewing this object')) {
      await found({ ...input, kind: 'memory', detail: text.slice(0, 300) });
    }
    let fresh = false;
    for (const feature of await target.coverage.take()) {
      if (seen.has(feature)) continue;
      seen.add(feature);
      fresh = true;
    }
    return fresh;
  };

  try {
    for (const seedCase of [...corpus]) await execute(seedCase);
    while (Date.now() - started < options.seconds * 1000) {
      // Newer entries are the frontier: half the picks come from the last quarter of the corpus.
      const from = rand() < 0.5 ? pick(corpus.slice(Math.floor((corpus.length * 3) / 4))) : pick(corpus);
      const input = mutate(from);
      if (input.body.length > 6 * 1024 * 1024) continue;
      if (await execute(input)) corpus.push(input);
      if (options.progress && Date.now() - lastProgress > 10_000) {
        lastProgress = Date.now();
        options.progress(
          `${((Date.now() - started) / 1000).toFixed(0)} s: ${executions} runs, corpus ${corpus.length}, ${seen.size} features, ${findings.length} findings`,
        );
      }
    }
  } finally {
    await target.stop();
    await rm(certs.dir, { recursive: true, force: true });
  }
  const seconds = (Date.now() - started) / 1000;
  return {
    seed: options.seed,
    seconds,
    executions,
    executionsPerSecond: executions / seconds,
    corpus: corpus.length,
    features: seen.size,
    statuses,
    findings,
  };
}
