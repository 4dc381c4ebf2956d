/**
 * `staticsite validate` (the built CLI) on every hostile shape at its largest (1.5 MB, half the API
 * server's request limit): a verdict, never a crash. The API server's message for some shapes grows
 * with the square of the input (every extra controller reference prints all the references: about
 * 300 million characters at 1.5 MB), so the CLI bounds what it prints as the webhook does, and gives
 * the webhook's message for the same object. A reader that closes the pipe early costs nothing but
 * the rest of the output: the run finishes with its own exit status.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { builtCli } from '../../devenv/webhook-process.ts';
import { MESSAGE_LIMIT } from '../../webhook/admission/bounds.ts';
import { HOSTILE_SHAPES, largestReview } from '../support/hostile-reviews.ts';
import { inProcessWebhook } from '../support/in-process-webhook.ts';

const LARGEST_BYTES = 1.5 * 1024 * 1024;
/** `... (N more characters)` after a cut message. */
const CUT_SUFFIX = /\.\.\. \(\d+ more characters\)$/;

interface JsonLine {
  status: string;
  code: number;
  message: string;
  errors: string[];
}

describe('e2e: staticsite validate bounds what it prints (the built CLI)', function () {
  this.timeout(120_000);
  let dir: string;
  const webhook = inProcessWebhook().listener;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'staticsite-bounded-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const shape of HOSTILE_SHAPES.filter((s) => s.paths.includes('/validate'))) {
    it(`${shape.name}: a verdict with the webhook's message, its message and errors bounded`, async () => {
      const { review } = largestReview(shape, LARGEST_BYTES);
      const file = join(dir, 'site.json');
      // The field validation the review asks the webhook for (the API server's default, Warn, when it does not).
      const fieldValidation = review.request.options?.fieldValidation ?? 'Warn';
      const args = [builtCli(), 'validate', '-o', 'json', '--field-validation', fieldValidation, file];
      await writeFile(file, JSON.stringify(review.request.object));
      if (review.request.oldObject) {
        await writeFile(join(dir, 'old.json'), JSON.stringify(review.request.oldObject));
        args.splice(2, 0, '--old', join(dir, 'old.json'));
      }
      const run = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
      expect(run.stderr).to.equal('');
      const lines = run.stdout.trim().split('\n');
      expect(lines).to.have.length(1);
      const line = JSON.parse(lines[0] as string) as JsonLine;
      const answer = await request(webhook).post('/validate').set('content-type', 'application/json').send(review);
      const response = answer.body.response as { allowed: boolean; status?: { message: string } };
      if (response.allowed) {
        expect(run.status, line.message).to.equal(0);
        return;
      }
      expect(run.status).to.equal(1);
      expect(line.status).to.equal('invalid');
      expect(line.message).to.equal(response.status?.message);
      const cut = (text: string) => text.replace(CUT_SUFFIX, '');
      expect(cut(line.message).length).to.be.at.most(MESSAGE_LIMIT);
      expect(line.errors.map(cut).join('').length).to.be.at.most(MESSAGE_LIMIT);
      expect(line.errors.length).to.be.above(0);
    });
  }

  it('a reader that closes the pipe early: no error, and the exit status of the whole run', async () => {
    const docs = Array.from(
      { length: 3000 },
      (_, i) =>
        `apiVersion: staticsite.dev/v1\nkind: StaticSite\nmetadata:\n  name: site-${i}\n  namespace: web\nspec:\n  content: "<p>${i}</p>"\n`,
    );
    docs.push('apiVersion: staticsite.dev/v1\nkind: StaticSite\nmetadata:\n  name: Bad_Name\nspec:\n  content: x\n');
    const file = join(dir, 'many.yaml');
    await writeFile(file, docs.join('---\n'));
    const child = spawn(process.execPath, [builtCli(), 'validate', '-o', 'json', file], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // The first chunk read, then the pipe closed: the rest of 3,000 lines cannot be written.
    child.stdout.once('data', () => child.stdout.destroy());
    const status = await new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    expect(stderr).to.equal('');
    expect(status, 'the last document is invalid').to.equal(1);
  });
});
