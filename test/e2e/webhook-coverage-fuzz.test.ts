/**
 * Coverage-guided fuzzing of the shipped webhook (devenv/fuzz/webhook-fuzzer.ts) in a fixed time
 * box with a fixed seed, plus every finding kept under test/fixtures/fuzz-findings/ replayed
 * against the built webhook. `npm run bench:fuzz` is the long run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { expect } from 'chai';
import { CoverageClient } from '../../devenv/fuzz/inspector.ts';
import { fuzzWebhook } from '../../devenv/fuzz/webhook-fuzzer.ts';
import { freePort } from '../../devenv/ports.ts';
import { ReviewClient } from '../../devenv/review-client.ts';
import { type LoopbackCerts, loopbackCerts } from '../../devenv/webhook-certs.ts';
import { WebhookProcess } from '../../devenv/webhook-process.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261203);
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 30);
const fixtures = new URL('../fixtures/', import.meta.url).pathname;
const findingsDir = `${fixtures}fuzz-findings/`;
const create = readFileSync(`${fixtures}admission/create-v1.json`, 'utf8');

describe('e2e: coverage-guided fuzzing of the shipped webhook', function () {
  this.timeout(SECONDS * 1000 + 180_000);

  describe('the coverage signal (the built webhook under its inspector)', () => {
    let certs: LoopbackCerts;
    let webhook: WebhookProcess;
    let client: ReviewClient;
    let coverage: CoverageClient;

    before(async () => {
      certs = await loopbackCerts();
      const inspectPort = await freePort();
      webhook = await WebhookProcess.start({ certDir: certs.dir, nodeArgs: [`--inspect=127.0.0.1:${inspectPort}`] });
      coverage = await CoverageClient.attach(inspectPort, (url) => url.includes('/dist/bin/'));
      client = new ReviewClient(webhook.url, certs.ca.certPem);
      // The review worker started with the process stops once ready (retireInitialWorkers): none
      // runs while ordinary reviews are measured, so no worker's start-up shows up among their blocks.
      while (coverage.workerCount > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    });

    after(async () => {
      coverage?.close();
      client?.close();
      await webhook?.stop();
      if (certs) await rm(certs.dir, { recursive: true, force: true });
    });

    it('a review shows the blocks it ran (an ordinary one in the main thread); repeats of it soon show no new ones', async () => {
      const seen = new Set<string>();
      const fresh = async (body: string) => {
        await client.raw('/validate', body);
        let count = 0;
        for (const feature of await coverage.take()) {
          if (!seen.has(feature)) count++;
          seen.add(feature);
        }
        return count;
      };
      const first = await fresh(create);
      expect(first).to.be.greaterThan(100);
      // The signal saturates: repeats of one review soon add nothing. Not always the very next one: a
      // timer or a connection's idle branch may run between two reviews on a loaded machine.
      const repeats: number[] = [];
      while (repeats.length < 6 && repeats.at(-1) !== 0) repeats.push(await fresh(create));
      expect(repeats.at(-1), `new blocks per repeat: ${repeats.join(', ')}`).to.equal(0);
      // A review that fails the CEL rule runs code the allowed one did not.
      const prodOneReplica = create.replace('"content": "<h1>shop</h1>"', '"content": "x", "tier": "prod"');
      expect(await fresh(prodOneReplica)).to.be.greaterThan(0);
      const [script] = [...seen][0]?.split(':') ?? [];
      expect(script).to.equal('file');
      expect([...seen].every((f) => f.includes('/dist/bin/'))).to.equal(true);
    });
  });

  it(`${SECONDS} s from seed ${SEED}: no crash, no 5xx, no review stopped at a limit, every uid echoed`, async () => {
    const report = await fuzzWebhook({ seed: SEED, seconds: SECONDS });
    process.stdout.write(
      `      ${report.executions} runs (${report.executionsPerSecond.toFixed(0)}/s), corpus ${report.seeds} seeds -> ${report.corpus} inputs, ${report.features} features, statuses ${JSON.stringify(report.statuses)}\n`,
    );
    expect(report.findings.map(({ kind, path, detail }) => `${kind} ${path}: ${detail}`)).to.deep.equal([]);
    // Guided: inputs that reached new code were kept, many beyond the seeds.
    expect(report.corpus).to.be.greaterThan(2 * report.seeds);
  });

  describe('findings kept as regression cases (test/fixtures/fuzz-findings/)', () => {
    // The webhook's findings: the ones posted to a path (validate's are replayed through the CLI).
    const files = readdirSync(findingsDir).filter(
      (f) =>
        f.endsWith('.json') &&
        (JSON.parse(readFileSync(`${findingsDir}${f}`, 'utf8')) as { path: string }).path.startsWith('/'),
    );
    let certs: LoopbackCerts;
    let webhook: WebhookProcess;
    let client: ReviewClient;

    before(async () => {
      certs = await loopbackCerts();
      webhook = await WebhookProcess.start({ certDir: certs.dir });
      client = new ReviewClient(webhook.url, certs.ca.certPem);
    });
    after(async () => {
      client?.close();
      await webhook?.stop();
      if (certs) await rm(certs.dir, { recursive: true, force: true });
    });

    for (const file of files) {
      it(file, async () => {
        const finding = JSON.parse(readFileSync(`${findingsDir}${file}`, 'utf8')) as { path: string; body: string };
        const { status, text } = await client.raw(finding.path, finding.body);
        expect(status).to.be.below(500);
        expect(text).to.not.include('the webhook stopped reviewing this object');
        expect(text).to.not.include('the webhook ran out of memory');
        expect(webhook.process.running).to.equal(true);
      });
    }
  });
});
