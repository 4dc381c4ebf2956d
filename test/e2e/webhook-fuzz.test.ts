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
import { ReviewClient } from '../../devenv/review-client.ts';
import { type LoopbackCerts, loopbackCerts } from '../../devenv/webhook-certs.ts';
import { WebhookProcess } from '../../devenv/webhook-process.ts';
import { peakRssMi, webhookRuntime } from '../support/webhook-manifest.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261201);
const CASES = Number(process.env.FUZZ_CASES ?? 2400);
const fixturesDir = new URL('../fixtures/', import.meta.url).pathname;

/** mulberry32: small, seedable, good enough to pick mutations. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const PROTO_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype'];
const STRINGS = [
  '',
  'prod',
  'dev',
  'BAD_host',
  'shop.web.sites.example.com',
  'staticsite.dev/external-record',
  '2026-12-01T10:00:00Z',
  'not-a-time',
  '\u0000',
  '\ud800',
  'ü日本🚀',
  '-1',
  'a'.repeat(300),
];

function mutations(rand: () => number) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const value = (depth = 0): Json => {
    switch (Math.floor(rand() * (depth > 3 ? 6 : 9))) {
      case 0:
        return null;
      case 1:
        return rand() < 0.5;
      case 2:
        return pick([0, -1, 1, 2, 10, 11, 1.5, -0, 2 ** 53, 1e308, -1e-308, Number.MAX_SAFE_INTEGER]);
      case 3:
      case 4:
        return pick(STRINGS);
      case 5:
        return 'z'.repeat(Math.floor(rand() * 100_000));
      case 6:
        return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
      default: {
        const o: { [k: string]: Json } = {};
        for (let i = Math.floor(rand() * 4); i > 0; i--) {
          Object.defineProperty(o, rand() < 0.3 ? pick(PROTO_KEYS) : pick(['a', 'name', 'spec', 'tier', 'x']), {
            value: value(depth + 1),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        return o;
      }
    }
  };
  /** Sets `v` at a random path of `root` (an existing key, a new key, or an array index). */
  const damage = (root: Json, v: Json, depth = 0): Json => {
    if (root === null || typeof root !== 'object' || rand() < (depth === 0 ? 0.02 : 0.3)) return v;
    if (Array.isArray(root)) {
      if (root.length === 0) return [v];
      const i = Math.floor(rand() * root.length);
      root[i] = damage(root[i] as Json, v, depth + 1);
      return root;
    }
    const keys = Object.keys(root);
    const key = keys.length > 0 && rand() < 0.8 ? pick(keys) : pick([...PROTO_KEYS, 'extra', 'metadata', 'spec']);
    Object.defineProperty(root, key, {
      value: damage((Object.hasOwn(root, key) ? root[key] : null) as Json, v, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
    return root;
  };
  return { pick, value, damage };
}

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
