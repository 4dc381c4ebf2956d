/**
 * Differential parity, CI's fixed-seed run: generated CRDs and objects through the Go oracle
 * (kube-apiserver's own code, pinned to the server by crd-oracle.test.ts) and through the engine,
 * a fixed number of cases from a fixed seed (about 30 s here; a time limit instead would make the
 * cases depend on the machine's speed, and the run on a loaded machine a different run). A mismatch that is not one of the named known gaps
 * (test/fixtures/differential/differential.ts, KNOWN_GAPS) fails the run; fast-check shrinks it and
 * the shrunk case is written to test/fixtures/differential/findings/ with the oracle's answers as
 * the expected values, where the replay below keeps it as a regression case (no oracle needed).
 * Long runs: npm run bench:differential.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import fc from 'fast-check';
import type { CustomResourceDefinition } from '../../api/index.ts';
import { readJsonDocument, textDecodingOf } from '../../cli/validate/json-document.ts';
import { admit, CrdVersionError, compileCrdVersion } from '../../crd/index.ts';
import { parseJsonInt64, stringifyJson } from '../../crd/json-int64.ts';
import { CrdOracle } from '../../devenv/crd-oracle.ts';
import { caseArb, type DifferentialCase, knownGap, runCase } from '../fixtures/differential/differential.ts';

const SEED = 20261203;
const CASES = Number(process.env.DIFFERENTIAL_CASES ?? 3000);
const FINDINGS = join(import.meta.dirname, '..', 'fixtures', 'differential', 'findings');

interface Finding {
  seed: number;
  case: DifferentialCase;
  request: {
    crd: CustomResourceDefinition;
    object?: unknown;
    objectText?: string;
    oldObject?: unknown;
    fieldValidation: string;
  };
  expected: { crd: { code: number; message: string }; admission?: { code: number; message: string } };
  differences: string[];
}

describe('e2e: differential parity of the engine with the Go oracle', function () {
  this.timeout(600_000);

  it(`seed ${SEED}, ${CASES} cases: every mismatch is a named known gap`, async () => {
    const oracle = await CrdOracle.start();
    const gaps = new Map<string, number>();
    let cases = 0;
    let refused = 0;
    let tied = 0;
    let found: { outcome: Awaited<ReturnType<typeof runCase>>; case: DifferentialCase } | undefined;
    try {
      const result = await fc.check(
        fc.asyncProperty(caseArb, async (c) => {
          const outcome = await runCase(oracle, c);
          cases++;
          if (outcome.crdRefused) refused++;
          if (outcome.contributorTie) tied++;
          if (!outcome.mismatch) return true;
          const gap = knownGap(outcome.mismatch);
          if (gap) {
            gaps.set(gap, (gaps.get(gap) ?? 0) + 1);
            return true;
          }
          found = { outcome, case: c };
          return false;
        }),
        { seed: SEED, numRuns: CASES },
      );
      process.stdout.write(
        `      differential: ${cases} cases (${refused} CRDs refused by the server's code, ${tied} listing other contributors of equal cost); known gaps: ${
          [...gaps].map(([k, n]) => `${n} ${k}`).join('; ') || 'none'
        }\n`,
      );
      if (result.failed && found) {
        const shrunk = (result.counterexample?.[0] as DifferentialCase | undefined) ?? found.case;
        const outcome = await runCase(oracle, shrunk);
        const answer = await oracle.ask({
          crd: outcome.request.crd,
          version: 'v1',
          fieldValidation: outcome.request.fieldValidation as 'Strict',
          ...(outcome.request.object !== undefined && { object: outcome.request.object }),
          ...(outcome.request.objectText !== undefined && { objectText: outcome.request.objectText }),
          ...(outcome.request.oldObject !== undefined && { oldObject: outcome.request.oldObject }),
          ...(outcome.request.crd.spec.scope !== 'Cluster' && { namespace: 'default' }),
          nameSuffix: 'x7k2q',
        });
        const finding: Finding = {
          seed: SEED,
          case: shrunk,
          request: outcome.request,
          expected: {
            crd: { code: answer.crd.code, message: answer.crd.message },
            ...(answer.admission && { admission: { code: answer.admission.code, message: answer.admission.message } }),
          },
          differences: (outcome.mismatch ?? found.outcome.mismatch)?.differences ?? [],
        };
        mkdirSync(FINDINGS, { recursive: true });
        const file = join(FINDINGS, `seed-${SEED}-${Date.now()}.json`);
        writeFileSync(file, `${stringifyJson(finding, 2)}\n`);
        expect.fail(`a mismatch outside the known gaps (saved to ${file}):\n${finding.differences.join('\n')}`);
      }
      expect(result.failed, String(result.errorInstance ?? '')).to.equal(false);
      expect(cases).to.equal(CASES);
      expect(refused, 'some generated CRDs are refused, most are not').to.be.within(1, cases * 0.8);
    } finally {
      await oracle.close();
    }
  });
});

describe('differential findings: the engine gives the oracle answers saved with each', () => {
  const files = (() => {
    try {
      return readdirSync(FINDINGS).filter((f) => f.endsWith('.json'));
    } catch {
      return [];
    }
  })();
  for (const file of files) {
    it(file, () => {
      const finding = parseJsonInt64(readFileSync(join(FINDINGS, file), 'utf8')) as Finding;
      const { crd, object, objectText, oldObject, fieldValidation } = finding.request;
      let compiled: ReturnType<typeof compileCrdVersion> | undefined;
      try {
        compiled = compileCrdVersion(crd, 'v1');
      } catch (e) {
        if (!(e instanceof CrdVersionError)) throw e;
        expect(e.message.replace(/selfType\d+/g, 'selfType')).to.equal(
          finding.expected.crd.message.replace(/selfType\d+/g, 'selfType'),
        );
        return;
      }
      expect(finding.expected.crd.code, 'the oracle accepted the CRD').to.equal(201);
      if (!finding.expected.admission || object === undefined) return;
      // A raw text is read as staticsite validate reads a JSON document.
      const document = objectText === undefined ? undefined : readJsonDocument(objectText, 100);
      const result = admit(compiled, document ? document.value : object, {
        fieldValidation: fieldValidation as 'Strict',
        ...(document && { textDecoding: textDecodingOf(document) }),
        generateName: (prefix) => `${prefix}x7k2q`,
        ...(crd.spec.scope !== 'Cluster' && { namespace: 'default' }),
        ...(oldObject !== undefined && { oldObject }),
      });
      const code = finding.expected.admission.code === 201 ? 200 : finding.expected.admission.code;
      expect({ code: result.code, message: result.message }).to.deep.equal({
        code,
        message: finding.expected.admission.message,
      });
    });
  }
});
