import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import request from 'supertest';
import { inProcessWebhook } from '../support/in-process-webhook.ts';

const review = readFileSync(new URL('../fixtures/conversion/v1-to-v1alpha1.json', import.meta.url), 'utf8');
const BIG = '123456789012345678901234567890';

/**
 * /convert reads metadata, its annotations and spec.hostname: a field of another type is refused
 * with a Failure naming it, never spread or coerced (a string spread as annotations made one property
 * per character: 36 s for 1 MB; an integer beyond 2^53 kept as raw JSON passed as an object).
 */
describe('webhook: /convert checks the type of every field it reads', function () {
  this.timeout(60_000);
  const app = inProcessWebhook().listener;

  const cases: Array<[string, string, string]> = [
    [
      'annotations given as a 1 MB string',
      review.replace('"resourceVersion": "12" }', `"resourceVersion": "12", "annotations": "${'a'.repeat(1 << 20)}" }`),
      'metadata.annotations is not an object of strings',
    ],
    [
      'an annotation value that is a number',
      review.replace('"resourceVersion": "12" }', '"resourceVersion": "12", "annotations": { "a": 1 } }'),
      'metadata.annotations is not an object of strings',
    ],
    [
      'metadata given as an integer beyond 2^53',
      review.replace(/"metadata": \{[^}]*\}/, `"metadata": ${BIG}`),
      'object has no metadata',
    ],
    [
      'spec given as an integer beyond 2^53',
      review.replace(/"spec": \{[^}]*\}/, `"spec": ${BIG}`),
      'object has no spec',
    ],
    [
      'spec.hostname given as a number',
      review.replace('"hostname": "shop.example.com"', '"hostname": 5'),
      'spec.hostname is not a string',
    ],
  ];
  for (const [what, body, message] of cases) {
    it(`${what}: a Failure naming the field, within 2 s`, async () => {
      const started = Date.now();
      const res = await request(app).post('/convert').set('content-type', 'application/json').send(body);
      expect(Date.now() - started).to.be.below(2_000);
      expect(res.status).to.equal(200);
      expect(res.body.response.result).to.deep.equal({
        status: 'Failure',
        // Without metadata the object is named by its index.
        message: `cannot convert ${message.includes('no metadata') ? 'objects[0]' : 'web/shop'} to staticsite.dev/v1alpha1: ${message}`,
      });
      expect(res.body.response.convertedObjects).to.deep.equal([]);
    });
  }
});
