import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import request from 'supertest';
import { PrintedValue } from '../../crd/apimachinery/field-error.ts';
import { cutText, fieldErrors, invalidMessage } from '../../crd/index.ts';
import { inProcessWebhook } from '../support/in-process-webhook.ts';
import { expectLinear } from '../support/linear.ts';

// biome-ignore lint/suspicious/noExplicitAny: fixtures are arbitrary JSON that the test edits
type Json = Record<string, any>;
const base = readFileSync(new URL('../fixtures/admission/create-v1.json', import.meta.url), 'utf8');

/** A create whose object has `n` owner references, every one `controller: true`. */
function reviewWithControllers(n: number): Json {
  const review = JSON.parse(base) as Json;
  review.request.object.metadata.ownerReferences = Array.from({ length: n }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: `owner-${i}`,
    uid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`,
    controller: true,
  }));
  return review;
}

/**
 * Each extra controller reference is an error that prints every reference (objectmeta.go:106), so
 * the API server's message grows with the square of their number; the webhook's work must not:
 * doubling the references at most about doubles the time of a review.
 */
describe('webhook: work grows linearly with hostile input (N controller owner references)', function () {
  this.timeout(120_000);
  const app = inProcessWebhook().listener;

  /** One review: its CPU time (user and system, ms) and its answer. */
  async function timed(path: string, body: string) {
    const started = process.cpuUsage();
    const res = await request(app).post(path).set('content-type', 'application/json').send(body);
    const used = process.cpuUsage(started);
    return { ms: (used.user + used.system) / 1000, answer: res.body as Json };
  }

  for (const path of ['/validate', '/mutate']) {
    it(`${path}: 1,000 to 8,000 references, time linear, 8,000 in under 1 s; a denial's message bounded`, async () => {
      const sizes = [1_000, 2_000, 4_000, 8_000];
      const bodies = sizes.map((n) => JSON.stringify(reviewWithControllers(n)));
      // The least CPU time of three rounds through every size, round by round so that a disturbance
      // of the machine meets all sizes alike. CPU time, not wall time: on a loaded machine the wait for
      // a CPU made linear work look quadratic.
      const times = sizes.map(() => Number.POSITIVE_INFINITY);
      let last: Json = {};
      for (let round = 0; round < 3; round++) {
        for (const [i, body] of bodies.entries()) {
          const { ms, answer } = await timed(path, body);
          times[i] = Math.min(times[i] ?? Number.POSITIVE_INFINITY, ms);
          last = answer;
        }
      }
      expectLinear(sizes, times, 5, 'ms of CPU for references'); // under 5 ms, timer noise decides
      expect(times.at(-1)).to.be.below(1_000);
      const response = last.response as Json;
      if (path === '/mutate') {
        // Metadata is the API server's to validate after mutation: the mutating webhook patches it.
        expect(response.allowed).to.equal(true);
        return;
      }
      expect(response.allowed).to.equal(false);
      const message: string = response.status.message;
      expect(message).to.match(
        /^StaticSite\.staticsite\.dev "shop" is invalid: \[metadata\.ownerReferences: Invalid value: \[\{"apiVersion":"v1","kind":"ConfigMap","name":"owner-0"/,
      );
      expect(message).to.match(/\.\.\. \(\d+ more characters\)$/);
      expect(message.length).to.be.below(70_000);
    });
  }
});

describe('engine: invalidMessage with a limit is the whole message cut, built only up to the limit', () => {
  const refs = (n: number) =>
    new PrintedValue(Array.from({ length: n }, (_, i) => ({ kind: 'ConfigMap', name: `o${i}`, controller: true })));
  const shared = refs(40);
  const errors = [
    fieldErrors.required('spec.content'),
    ...Array.from({ length: 30 }, (_, i) => fieldErrors.invalid('metadata.ownerReferences', shared, `extra ${i}`)),
    fieldErrors.invalid('metadata.ownerReferences', shared, 'extra 3'), // a duplicate, dropped as Go drops it
    fieldErrors.invalid('metadata.ownerReferences', refs(40), 'extra 3'), // the same text from another value
    fieldErrors.invalid('spec.replicas', 0, 'must be greater than or equal to 1'),
  ];
  const whole = invalidMessage('StaticSite.staticsite.dev', 'shop', errors);

  it('drops the duplicates Go drops (equal text, shared or not)', () => {
    expect(whole.split('extra 3]').length + whole.split('extra 3,').length - 2).to.equal(1);
  });

  for (const limit of [0, 1, 50, 1_000, 10_000, whole.length - 1, whole.length, whole.length + 5]) {
    it(`limit ${limit}`, () => {
      expect(invalidMessage('StaticSite.staticsite.dev', 'shop', errors, limit)).to.equal(cutText(whole, limit));
    });
  }
});
