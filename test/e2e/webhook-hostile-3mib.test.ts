/**
 * The API server sends at most 3 MiB in a request: the shipped webhook, as the manifest runs it,
 * answers the largest review of every hostile shape up to that size with a status below 500, within
 * a bound on its CPU time, and stays alive. The bound guards against pathological work, not the
 * performance target, which bench/RESULTS.md records ("Every hostile shape at the largest size"):
 * CPU time, which other load on the machine does not stretch, under CPU_BOUND_MS, about twice what
 * the slowest shape takes on this project's 2-CPU machines (99,840 invalid labels on /validate: 0.56 s
 * on one host, 0.9-1.2 s on another, the same code measured side by side), where quadratic work at
 * 3 MiB would take minutes; the wall time under twice that. It runs without the test run's coverage
 * instrumentation, which does not ship and adds half again to the CPU time.
 */
import { rm } from 'node:fs/promises';
import { expect } from 'chai';
import { ReviewClient } from '../../devenv/review-client.ts';
import { type LoopbackCerts, loopbackCerts } from '../../devenv/webhook-certs.ts';
import { WebhookProcess } from '../../devenv/webhook-process.ts';
import { HOSTILE_SHAPES, largestReview } from '../support/hostile-reviews.ts';
import { cpuSecondsOf } from '../support/process-table.ts';
import { webhookRuntime } from '../support/webhook-manifest.ts';

/** The API server's limit on a request body (k8s.io/apiserver, DefaultMaxRequestBodyBytes). */
const API_SERVER_REQUEST_LIMIT = 3 * 1024 * 1024;
const CPU_BOUND_MS = 2_000;

describe('e2e: the shipped webhook answers every hostile review up to 3 MiB with bounded work', function () {
  this.timeout(240_000);
  let certs: LoopbackCerts;
  let webhook: WebhookProcess;
  let client: ReviewClient;

  before(async () => {
    certs = await loopbackCerts();
    webhook = await WebhookProcess.start({
      certDir: certs.dir,
      env: { NODE_OPTIONS: webhookRuntime().nodeOptions },
      uninstrumented: true,
    });
    client = new ReviewClient(webhook.url, certs.ca.certPem);
    // The first review of each path compiles its code: not what a hostile review costs.
    for (const shape of HOSTILE_SHAPES) {
      for (const path of shape.paths) await client.send(path, shape.build(10));
    }
  });

  after(async () => {
    client?.close();
    await webhook?.stop();
    if (certs) await rm(certs.dir, { recursive: true, force: true });
  });

  for (const shape of HOSTILE_SHAPES) {
    for (const path of shape.paths) {
      it(`${path}: ${shape.name}`, async () => {
        const { n, review } = largestReview(shape, API_SERVER_REQUEST_LIMIT);
        const pid = webhook.process.pid as number;
        const cpuBefore = cpuSecondsOf(pid);
        const started = performance.now();
        const answer = await client.send(path, review);
        const ms = performance.now() - started;
        const cpuMs = (cpuSecondsOf(pid) - cpuBefore) * 1000;
        process.stdout.write(
          `      n=${n}: HTTP ${answer.status} in ${ms.toFixed(0)} ms, ${cpuMs.toFixed(0)} ms of CPU\n`,
        );
        expect(answer.status).to.be.below(500);
        expect(cpuMs).to.be.below(CPU_BOUND_MS);
        expect(ms).to.be.below(2 * CPU_BOUND_MS);
        expect(webhook.process.running).to.equal(true);
      });
    }
  }

  it('no review was answered by a replaced worker or counted as a panic', async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${webhook.metricsPort}/metrics`)).text();
    expect(metrics).to.not.match(/^staticsite_webhook_handler_panics_total\{[^}]*\} [1-9]/m);
    expect(metrics).to.match(/^staticsite_webhook_review_workers_replaced_total\{reason="memory"\} 0$/m);
    expect(metrics).to.match(/^staticsite_webhook_review_workers_replaced_total\{reason="deadline"\} 0$/m);
    expect(metrics).to.match(/^staticsite_webhook_review_workers_replaced_total\{reason="exit"\} 0$/m);
    // Every shape beyond the in-thread bounds was decided by a worker, not only the small ones here.
    expect(metrics).to.match(/^staticsite_webhook_reviews_placed_total\{thread="worker"\} [1-9]/m);
  });
});
