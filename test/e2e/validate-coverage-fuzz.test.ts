/**
 * Coverage-guided fuzzing of `staticsite validate` (devenv/fuzz/validate-fuzzer.ts): the shipped CLI
 * bundle's own entry point under its inspector and a heap limit, in a fixed time box from a fixed
 * seed, plus every validate finding kept under test/fixtures/fuzz-findings/ replayed through the
 * built CLI as a process. `npm run bench:fuzz -- SECONDS SEED validate` is the long run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { argsOf, fuzzValidate, problemsOf, VALIDATE_HEAP_MB } from '../../devenv/fuzz/validate-fuzzer.ts';
import { runBuiltCli } from '../support/built-cli.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261203);
const SECONDS = Number(process.env.FUZZ_VALIDATE_SECONDS ?? 20);
const fixtures = new URL('../fixtures/', import.meta.url).pathname;
const findingsDir = `${fixtures}fuzz-findings/`;

describe('e2e: coverage-guided fuzzing of staticsite validate', function () {
  this.timeout(SECONDS * 1000 + 120_000);

  it(`${SECONDS} s from seed ${SEED}: no crash, no unexpected error, no run over 5 s, every -o json line JSON`, async () => {
    const report = await fuzzValidate({ seed: SEED, seconds: SECONDS });
    process.stdout.write(
      `      ${report.executions} runs (${report.executionsPerSecond.toFixed(0)}/s), corpus ${report.seeds} seeds -> ${report.corpus} inputs, ${report.features} features, ${JSON.stringify(report.statuses)}\n`,
    );
    expect(report.findings.map(({ kind, path, detail }) => `${kind} ${path}: ${detail}`)).to.deep.equal([]);
    // Every exit the command has was reached: valid, invalid, and inputs it cannot read.
    expect(Object.keys(report.statuses).sort()).to.deep.equal(['exit 0', 'exit 1', 'exit 2']);
    // Guided: inputs that reached new code were kept, many beyond the seeds.
    expect(report.corpus).to.be.greaterThan(2 * report.seeds);
  });

  it('the judge of a run sees what a user would call a bug: a catch-all error, a bad exit, a line of -o json that is not JSON', () => {
    const ok = { code: 1, stdout: '{"results":[]}', stderr: '', ms: 10 };
    expect(problemsOf('validate -o json --field-validation Strict', ok, 1 << 20)).to.deep.equal([]);
    const kinds = (answer: typeof ok) =>
      problemsOf('validate -o json --field-validation Strict', answer, 1 << 20).map((p) => p.kind);
    expect(kinds({ ...ok, stderr: 'staticsite validate: Cannot read properties of undefined\n' })).to.deep.equal([
      'unexpected-error',
    ]);
    expect(kinds({ ...ok, code: 134 })).to.deep.equal(['unexpected-error']);
    expect(kinds({ ...ok, stdout: '{"document":1}\n{"document":2}\n' })).to.deep.equal([]);
    expect(kinds({ ...ok, stdout: '{"document":1}\n{"document":' })).to.deep.equal(['bad-report']);
    expect(kinds({ ...ok, ms: 6_000 })).to.deep.equal(['slow']);
  });

  describe('validate findings kept as regression cases (test/fixtures/fuzz-findings/), through the built CLI', () => {
    const files = readdirSync(findingsDir).filter((f) => f.endsWith('.json'));
    const cases = files
      .map((file) => ({
        file,
        ...(JSON.parse(readFileSync(`${findingsDir}${file}`, 'utf8')) as { path: string; body: string }),
      }))
      .filter((c) => c.path.startsWith('validate '));
    for (const c of cases) {
      it(c.file, async () => {
        const answer = await runBuiltCli(['validate', ...argsOf(c.path)], {
          stdin: c.body,
          nodeArgs: [`--max-old-space-size=${VALIDATE_HEAP_MB}`],
        });
        expect(problemsOf(c.path, answer, Number.POSITIVE_INFINITY)).to.deep.equal([]);
        expect([0, 1, 2]).to.include(answer.code);
      });
    }
  });
});
