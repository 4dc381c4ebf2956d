import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import request from 'supertest';
import { inProcessWebhook } from '../support/in-process-webhook.ts';

// biome-ignore lint/suspicious/noExplicitAny: fixtures are arbitrary JSON that the test edits
type Json = Record<string, any>;
const fixture = (path: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8')) as Json;

/** Every field taken from input is bounded in the log: a 1 MiB uid costs a log line no more than a short one. */
describe('webhook: what the log takes from a request is bounded', () => {
  const HUGE_UID = 'u'.repeat(1 << 20);
  const lines: string[] = [];
  const app = inProcessWebhook({ logLines: lines }).listener;
  beforeEach(() => {
    lines.length = 0;
  });

  const cases: Array<[string, string, Json]> = [
    ['a denied review', '/validate', fixture('admission/create-prod-one-replica.json')],
    ['an allowed review (debug)', '/mutate', fixture('admission/create-v1.json')],
    ['a failed conversion', '/convert', fixture('conversion/bad-object.json')],
  ];
  for (const [what, path, review] of cases) {
    it(`${what} with a 1 MiB uid logs at most 2 KiB a line, and the uid cut`, async () => {
      review.request.uid = HUGE_UID;
      const res = await request(app).post(path).set('content-type', 'application/json').send(review);
      expect(res.status).to.equal(200);
      expect(lines.length, 'the review was logged').to.be.greaterThan(0);
      for (const line of lines) expect(line.length).to.be.below(2048);
      expect(lines.join('')).to.include('more characters)');
    });
  }
});
