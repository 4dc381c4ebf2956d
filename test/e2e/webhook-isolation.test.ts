/**
 * One review can neither kill the shipped webhook nor hold it: each runs in a review worker with a
 * heap of its own and a deadline. The built CLI is started with a small heap or a short deadline
 * (its own flags), so that a hostile review of an ordinary size runs into them.
 */
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { expect } from 'chai';
import { ReviewClient } from '../../devenv/review-client.ts';
import { type LoopbackCerts, loopbackCerts } from '../../devenv/webhook-certs.ts';
import { WebhookProcess } from '../../devenv/webhook-process.ts';
import { HOSTILE_SHAPES } from '../support/hostile-reviews.ts';

// biome-ignore lint/suspicious/noExplicitAny: fixtures are arbitrary JSON
type Json = Record<string, any>;
const fixture = (path: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8')) as Json;
const invalidLabels = HOSTILE_SHAPES.find((s) => s.name === 'invalid labels') as (typeof HOSTILE_SHAPES)[number];

async function metric(webhook: WebhookProcess, line: RegExp): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${webhook.metricsPort}/metrics`)).text();
  const found = text.split('\n').find((l) => line.test(l));
  return Number(found?.split(' ').at(-1) ?? Number.NaN);
}

async function waitForReady(webhook: WebhookProcess): Promise<void> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    if ((await fetch(`http://127.0.0.1:${webhook.metricsPort}/readyz`)).ok) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the webhook did not become ready again within 10 s');
}

describe('e2e: review workers (the built webhook)', function () {
  this.timeout(120_000);
  let certs: LoopbackCerts;

  before(async () => {
    certs = await loopbackCerts();
  });
  after(async () => {
    if (certs) await rm(certs.dir, { recursive: true, force: true });
  });

  async function started(args: string[], env: Record<string, string> = {}, uninstrumented = false) {
    const webhook = await WebhookProcess.start({ certDir: certs.dir, args, env, uninstrumented });
    return { webhook, client: new ReviewClient(webhook.url, certs.ca.certPem) };
  }

  it('a review that exhausts its worker heap is denied (413, saying why), its worker replaced, the process alive', async () => {
    const { webhook, client } = await started(['--review-heap-mb=24']);
    try {
      const { status, body } = await client.send('/validate', invalidLabels.build(95_000));
      expect(status).to.equal(200);
      expect(body.response.uid).to.equal('705ab4f5-6393-11e8-b7cc-42010a800002');
      expect(body.response.allowed).to.equal(false);
      expect(body.response.status).to.include({ code: 413, reason: 'RequestEntityTooLarge' });
      expect(body.response.status?.message).to.equal(
        'the webhook ran out of memory reviewing this object (one review may use 24 MiB); an object that needs more cannot be admitted',
      );
      expect(webhook.process.running).to.equal(true);
      expect(await metric(webhook, /^staticsite_webhook_review_workers_replaced_total\{reason="memory"\}/)).to.equal(1);
      await waitForReady(webhook);
      const next = await client.post('/validate', fixture('admission/create-v1.json'));
      expect(next.response.allowed).to.equal(true);
      expect(await webhook.process.tail(50)).to.include('a review worker ran out of memory: it is replaced');
    } finally {
      client.close();
      await webhook.stop();
    }
  });

  // The deadline counts from the review's dispatch, parsing included: a review still parsing when it
  // runs out has no uid to answer with, and fails as a call (HTTP 504). This case is the other one, a
  // deadline reached while the rules run: 95,000 labels parse in 60-200 ms on 2 CPUs (quiet to
  // loaded) and take 500-1000 ms in all, so the deadline sits between the two, and the webhook runs as
  // it ships, without the test run's coverage instrumentation (which slows parsing by half again).
  it('a review that overruns its deadline is denied (504 Timeout), while the other worker answers at once', async () => {
    const { webhook, client } = await started(['--review-deadline=300ms'], {}, true);
    try {
      const ordinary = fixture('admission/create-v1.json');
      await client.post('/validate', ordinary); // compiled before the clock matters
      const slow = client.send('/validate', invalidLabels.build(95_000));
      await new Promise((resolve) => setTimeout(resolve, 30));
      const quickStarted = performance.now();
      const quick = await client.post('/mutate', ordinary);
      const quickMs = performance.now() - quickStarted;
      expect(quick.response.allowed).to.equal(true);
      expect(quickMs, 'a review beside the overrunning one waits for it').to.be.below(150);

      const { status, body } = await slow;
      expect(status).to.equal(200);
      expect(body.response.allowed).to.equal(false);
      expect(body.response.status).to.include({ code: 504, reason: 'Timeout' });
      expect(body.response.status?.message).to.equal(
        'the webhook stopped reviewing this object after 300 ms, its limit for one review; an object that takes longer cannot be admitted',
      );
      expect(await metric(webhook, /^staticsite_webhook_review_workers_replaced_total\{reason="deadline"\}/)).to.equal(
        1,
      );
      await waitForReady(webhook);
      expect((await client.post('/validate', ordinary)).response.allowed).to.equal(true);
    } finally {
      client.close();
      await webhook.stop();
    }
  });

  it('a --max-old-space-size in NODE_OPTIONS, which overrides the workers heap limit, is logged as a warning', async () => {
    const { webhook, client } = await started([], { NODE_OPTIONS: '--max-old-space-size=512' });
    try {
      expect(await webhook.process.tail(50)).to.include('the review workers heap limit is overridden');
    } finally {
      client.close();
      await webhook.stop();
    }
  });

  it('answers of 64 KiB and more, written after their request turn, never cost the next request on the connection', async () => {
    // Node's HTTPS server pauses a connection whose last answer is still being written when the
    // next request's headers arrive; the TLS layer then hands the rest of that request to the paused
    // parser, which fails with HPE_PAUSED and the connection is reset (docs/webhook-throughput.md).
    const { webhook, client } = await started([]);
    try {
      const review = fixture('conversion/v1-to-v1alpha1.json');
      review.request.objects[0].metadata.annotations = { 'example.com/notes': 'n'.repeat(90_000) };
      const body = JSON.stringify(review);
      const lost: string[] = [];
      for (let i = 0; i < 600; i++) {
        try {
          const { status, text } = await client.raw('/convert', body);
          if (status !== 200 || text.length < 90_000) lost.push(`#${i}: HTTP ${status}`);
        } catch (error) {
          lost.push(`#${i}: ${(error as Error).message}`);
        }
      }
      expect(lost).to.deep.equal([]);
    } finally {
      client.close();
      await webhook.stop();
    }
  });

  it('bad isolation flags exit 2 naming the flag', async () => {
    const { spawnSync } = await import('node:child_process');
    const { builtCli } = await import('../../devenv/webhook-process.ts');
    for (const [flag, message] of [
      ['--review-workers=0', '--review-workers must be a whole number from 1 to 64, got "0"'],
      ['--review-heap-mb=lots', '--review-heap-mb must be a whole number from 1 to 65536, got "lots"'],
      ['--review-deadline=0s', '--review-deadline must be longer than 0s'],
    ]) {
      const run = spawnSync(process.execPath, [builtCli(), 'webhook', `--cert-dir=${certs.dir}`, flag as string], {
        encoding: 'utf8',
      });
      expect(run.status, run.stderr).to.equal(2);
      expect(run.stderr).to.include(message);
    }
  });
});
