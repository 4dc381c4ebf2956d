import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import request from 'supertest';
import { DEFAULT_MAX_DEPTH, DEFAULT_MAX_VALUES, shapeProblem, valueShapeProblem } from '../../webhook/review/codec.ts';
import { inProcessWebhook } from '../support/in-process-webhook.ts';

/** A deterministic generator (mulberry32): the same documents on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random JSON with strings full of structure characters and escapes, keys unique per object. */
function document(next: () => number, depth: number): unknown {
  const pick = next();
  if (depth > 6 || pick < 0.35) {
    const scalars = [0, -1.5e3, 123456789012345, true, false, null, '', '[{,:}]', 'a"b\\\\c', 'ü🙂\n', '\\u005b'];
    return scalars[Math.floor(next() * scalars.length)];
  }
  const size = Math.floor(next() * 5);
  if (pick < 0.65) return Array.from({ length: size }, () => document(next, depth + 1));
  return Object.fromEntries(Array.from({ length: size }, (_, i) => [`k${i}[{"\\\\`, document(next, depth + 1)]));
}

/** The reference: the parsed value walked (every value counted; depth of the deepest object or array). */
function measure(value: unknown, depth = 1): { values: number; depth: number } {
  if (typeof value !== 'object' || value === null) return { values: 1, depth: 0 };
  const children = Array.isArray(value) ? value : Object.values(value);
  let values = 1;
  let deepest = depth;
  for (const child of children) {
    const m = measure(child, depth + 1);
    values += m.values;
    deepest = Math.max(deepest, m.depth);
  }
  return { values, depth: deepest };
}

describe('webhook: the shape of a body is read from its bytes, before it is parsed', () => {
  it('agrees with the parsed value on 3,000 generated documents: exactly the value count and the depth', () => {
    const next = random(20261202);
    for (let i = 0; i < 3_000; i++) {
      const value = document(next, 1);
      const text = next() < 0.5 ? JSON.stringify(value) : JSON.stringify(value, null, next() < 0.5 ? 2 : '\t');
      const bytes = Buffer.from(text);
      const { values, depth } = measure(value);
      expect(shapeProblem(bytes, Math.max(depth, 1), values), text).to.equal(undefined);
      expect(shapeProblem(bytes, 100, values - 1), text).to.equal('values');
      if (depth > 1) expect(shapeProblem(bytes, depth - 1, Number.POSITIVE_INFINITY), text).to.equal('depth');
    }
  });

  it('read from the parsed value (the in-thread placement), the same verdict at every bound on 3,000 documents', () => {
    const next = random(20261207);
    for (let i = 0; i < 3_000; i++) {
      const value = document(next, 1);
      const bytes = Buffer.from(JSON.stringify(value));
      const parsed = JSON.parse(bytes.toString());
      const { values, depth } = measure(value);
      for (const [maxDepth, maxValues] of [
        [Math.max(depth, 1), values],
        [100, values - 1],
        [Math.max(depth - 1, 1), Number.POSITIVE_INFINITY],
        [Math.max(depth - 1, 1), values - 1],
        [1 + Math.floor(next() * 8), 1 + Math.floor(next() * values)],
      ] as const) {
        expect(valueShapeProblem(parsed, maxDepth, maxValues), `${maxDepth} ${maxValues} ${bytes}`).to.equal(
          shapeProblem(bytes, maxDepth, maxValues),
        );
      }
    }
  });
});

/**
 * Bodies built to exhaust the heap once parsed: refused with a 400 naming the limit, in well under a
 * second, and without the heap growing by what parsing them would take (hundreds of MB).
 */
describe('webhook: bodies built to exhaust the heap are refused before they are parsed', function () {
  this.timeout(60_000);
  const app = inProcessWebhook().listener;
  const SIZE = 7 * 1024 * 1024 - 1024;
  const review = (object: string) =>
    `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","object":${object}}}`;
  const fill = (open: string, item: string, close: string, overhead: number) =>
    `${open}${`${item},`.repeat(Math.floor((SIZE - overhead) / (item.length + 1)))}${item}${close}`;
  const nestedArrays = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const cases: Array<[string, string, string, string]> = [
    ['7 MB of nested arrays', '/validate', nestedArrays(SIZE / 2), `nests deeper than ${DEFAULT_MAX_DEPTH} levels`],
    ['[{},{},…] in 7 MB', '/validate', fill('[', '{}', ']', 0), `holds more than ${DEFAULT_MAX_VALUES} JSON values`],
    [
      '3 million nested arrays under request.object.spec',
      '/mutate',
      review(`{"spec":${nestedArrays(3_000_000 / 2)}}`),
      `nests deeper than ${DEFAULT_MAX_DEPTH} levels`,
    ],
    ['/convert: [[],[],…]', '/convert', fill('[', '[]', ']', 0), `holds more than ${DEFAULT_MAX_VALUES} JSON values`],
    [
      '/convert: {"k0":0,…}',
      '/convert',
      `{${Array.from({ length: 600_000 }, (_, i) => `"k${i}":0`).join(',')}}`,
      `holds more than ${DEFAULT_MAX_VALUES} JSON values`,
    ],
    [
      '/convert: a deep object',
      '/convert',
      `${'{"a":'.repeat(500_000)}0${'}'.repeat(500_000)}`,
      `nests deeper than ${DEFAULT_MAX_DEPTH} levels`,
    ],
  ];
  for (const [what, path, body, message] of cases) {
    it(`${what}: a 400 naming the limit, fast, and no heap spent on it`, async () => {
      globalThis.gc?.();
      const heapBefore = process.memoryUsage().heapUsed;
      const started = performance.now();
      const res = await request(app).post(path).set('content-type', 'application/json').send(body);
      const ms = performance.now() - started;
      const grown = process.memoryUsage().heapUsed - heapBefore;
      expect(res.status).to.equal(400);
      expect(res.body.message).to.include(message);
      expect(ms).to.be.below(1_000);
      // The body itself (a string of up to 7 MB, and its copy in supertest) is all the heap may hold.
      expect(grown).to.be.below(64 * 1024 * 1024);
    });
  }

  it('a 6.3 MB metadata.name of emoji: denied in under 3 s, the quoted name costing no more heap than its copies', async () => {
    const fixture = JSON.parse(
      readFileSync(new URL('../fixtures/admission/create-v1.json', import.meta.url), 'utf8'),
    ) as { request: { object: { metadata: { name: string } } } };
    fixture.request.object.metadata.name = '🙂'.repeat(1_600_000);
    const body = JSON.stringify(fixture);
    globalThis.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const started = performance.now();
    const res = await request(app).post('/validate').set('content-type', 'application/json').send(body);
    const ms = performance.now() - started;
    const grown = process.memoryUsage().heapUsed - heapBefore;
    expect(res.status).to.equal(200);
    expect(res.body.response.allowed).to.equal(false);
    expect(ms).to.be.below(3_000);
    expect(grown).to.be.below(96 * 1024 * 1024);
  });
});
