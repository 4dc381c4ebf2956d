/**
 * Seeded fuzzing of the shipped webhook process (node dist/bin/staticsite.js webhook, the manifest's
 * NODE_OPTIONS): reviews built from the fixtures and then damaged at random (values of every JSON
 * type at random paths, prototype names, long strings, deep and wide values, broken envelopes, bytes
 * that are not JSON). Every answer must be a 2xx or 4xx (never a 500), a 200 must echo the request's
 * uid, the process must stay alive and under the manifest's memory limit. Change FUZZ_SEED to
 * explore; a failure prints the seed and the case number to reproduce it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { expect } from 'chai';
import { type Json, mutations, random } from '../../devenv/fuzz/mutations.ts';
import { ReviewClient } from '../../devenv/review-client.ts';
import { type LoopbackCerts, loopbackCerts } from '../../devenv/webhook-certs.ts';
import { WebhookProcess } from '../../devenv/webhook-process.ts';
import { peakRssMi, webhookRuntime } from '../support/webhook-manifest.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261201);
const CASES = Number(process.env.FUZZ_CASES ?? 2400);
const fixturesDir = new URL('../fixtures/', import.meta.url).pathname;

function fixtures(): Json[] {
  const reviews = readdirSync(`${fixturesDir}admission`)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(`${fixturesDir}admission/${f}`, 'utf8')) as Json);
  const conversions = readdirSync(`${fixturesDir}conversion`)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(`${fixturesDir}conversion/${f}`, 'utf8')) as Json);
  return [...reviews, ...conversions];
}

interface Case {
  path: '/mutate' | '/validate' | '/convert';
  body: string;
  uid: unknown;
}

function makeCase(rand: () => number, base: Json[]): Case {
  const { pick, value, damage } = mutations(rand);
  const review = structuredClone(pick(base)) as { [k: string]: Json };
  const isConversion = review.kind === 'ConversionReview';
  const path = isConversion ? '/convert' : pick(['/mutate', '/validate'] as const);
  // Mostly inside the object under review, where the engine works; sometimes anywhere.
  const request = review.request as { [k: string]: Json } | undefined;
  const targets: Array<{ [k: string]: Json }> = [review];
  if (request && typeof request === 'object') {
    for (const k of ['object', 'oldObject', 'objects']) {
      const t = request[k];
      if (t !== null && typeof t === 'object' && !Array.isArray(t)) targets.push(t as { [k: string]: Json });
      if (Array.isArray(t) && t[0] && typeof t[0] === 'object') targets.push(t[0] as { [k: string]: Json });
    }
  }
  for (let n = 1 + Math.floor(rand() * 3); n > 0; n--) {
    const target = rand() < 0.8 ? pick(targets.slice(1).length > 0 ? targets.slice(1) : targets) : review;
    damage(target, value(), 1);
  }
  let doc: Json = review;
  if (rand() < 0.02) doc = value();
  let body = JSON.stringify(doc);
  const roll = rand();
  if (roll < 0.04) body = body.slice(0, Math.floor(rand() * body.length));
  else if (roll < 0.06) body = body.replace('{', '{"uid":1,"uid":2,');
  else if (roll < 0.08) body = `${'['.repeat(2000)}${']'.repeat(2000)}`;
  else if (roll < 0.1) body = body.replace(/:(\d+)([,}])/, ':9223372036854775808$2');
  const sent = (doc as { request?: { uid?: unknown } } | null)?.request;
  return { path, body, uid: typeof sent === 'object' && sent !== null ? sent.uid : undefined };
}

describe(`e2e: fuzzing the shipped webhook (${CASES} seeded reviews, seed ${SEED})`, function () {
  this.timeout(600_000);
  let certs: LoopbackCerts;
  let webhook: WebhookProcess;
  let client: ReviewClient;
  const runtime = webhookRuntime();

  before(async () => {
    certs = await loopbackCerts();
    webhook = await WebhookProcess.start({ certDir: certs.dir, env: { NODE_OPTIONS: runtime.nodeOptions } });
    client = new ReviewClient(webhook.url, certs.ca.certPem);
  });

  after(async () => {
    client?.close();
    await webhook?.stop();
    await rm(certs.dir, { recursive: true, force: true });
  });

  it('never answers 500, always echoes the uid, never dies, stays under the memory limit', async () => {
    const rand = random(SEED);
    const base = fixtures();
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    for (let i = 0; i < CASES; i++) {
      const c = makeCase(rand, base);
      let status: number;
      let text: string;
      try {
        const res = await client.raw(c.path, c.body);
        status = res.status;
        text = res.text;
      } catch (error) {
        failures.push(`case ${i} (${c.path}): no answer: ${(error as Error).message}`);
        if (!webhook.process.running) break;
        continue;
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status >= 500) failures.push(`case ${i} (${c.path}): HTTP ${status}: ${text.slice(0, 200)}`);
      if (status === 200 && typeof c.uid === 'string' && c.uid !== '') {
        const uid = (JSON.parse(text) as { response?: { uid?: unknown } }).response?.uid;
        if (uid !== c.uid)
          failures.push(`case ${i} (${c.path}): uid ${JSON.stringify(uid)} for ${JSON.stringify(c.uid)}`);
      }
    }
    const peak = peakRssMi(webhook.process.pid);
    process.stdout.write(
      `      answers by status: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}; peak RSS ${peak.toFixed(0)} MiB\n`,
    );
    expect(failures.slice(0, 20), `seed ${SEED}`).to.deep.equal([]);
    expect(webhook.process.running).to.equal(true);
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).to.equal(CASES);
    expect(peak).to.be.below(runtime.memoryLimitMi);
  });
});
