import { expect } from 'chai';
import { readCorpus } from '../../cli/compare/corpus.ts';
import { renderHtml, renderMarkdown } from '../../cli/compare/report.ts';
import { type Comparison, runComparison } from '../../cli/compare/run.ts';
import { testCluster } from '../support/shared.ts';

const corpusDir = new URL('../compare/', import.meta.url).pathname;

describe('e2e: schema-only versus webhook validation, four ways', function () {
  this.timeout(300_000);
  let comparison: Comparison;

  before(async () => {
    const { controlPlane } = await testCluster();
    comparison = await runComparison(controlPlane, await readCorpus(corpusDir), { latencySamples: 10 });
  });

  it('runs every corpus case, covering each kind of rule', () => {
    const names = comparison.cases.map((c) => c.testCase.name);
    expect(names.length).to.be.at.least(20);
    expect(names).to.include.members([
      'replicas-zero',
      'tier-unknown',
      'prod-one-replica',
      'tier-change',
      'unknown-field-warn',
      'unknown-field-strict',
      'minimal-dev',
      'duplicate-hostname',
      'hostname-default',
    ]);
  });

  it('every difference between the four ways is a documented webhook-only behaviour', () => {
    const unexplained = comparison.cases.flatMap((c) =>
      c.differences.filter((d) => !d.behaviour).map((d) => `${c.testCase.name}: ${d.aspect} in ${d.modes.join(',')}`),
    );
    expect(unexplained).to.deep.equal([]);
  });

  it('A, B, C and D give the same verdict on every case the schema can express', () => {
    const expressible = (x: Comparison['cases'][number]) => x.testCase.webhookOnly.every((b) => b === 'cel-note');
    for (const c of comparison.cases.filter(expressible)) {
      const verdicts = Object.values(c.outcomes).map((o) => `${o.allowed} ${o.code}`);
      expect(new Set(verdicts).size, c.testCase.name).to.equal(1);
    }
  });

  it('the server-only and webhook paths agree on the CEL and transition-rule texts', () => {
    const prod = comparison.cases.find((c) => c.testCase.name === 'prod-one-replica');
    expect(prod?.outcomes.A.message).to.equal(
      'StaticSite.staticsite.dev "prod1" is invalid: spec: Invalid value: prod sites need at least 2 replicas',
    );
    expect(prod?.outcomes.B.message).to.equal(prod?.outcomes.A.message);
    expect(prod?.outcomes.D.message).to.equal(prod?.outcomes.A.message);
    const tier = comparison.cases.find((c) => c.testCase.name === 'tier-change');
    expect(tier?.outcomes.A.allowed).to.equal(false);
    expect(tier?.outcomes.B.message).to.equal(tier?.outcomes.A.message);
  });

  it('only the webhook refuses a duplicate hostname', () => {
    const dup = comparison.cases.find((c) => c.testCase.name === 'duplicate-hostname');
    expect(dup?.outcomes.A.allowed).to.equal(true);
    for (const mode of ['B', 'C', 'D'] as const) {
      expect(dup?.outcomes[mode].message, mode).to.equal(
        'StaticSite.staticsite.dev "taker" is invalid: spec.hostname: Duplicate value: "shared.example.com"',
      );
    }
  });

  it('the report lists every case, in Markdown and in HTML', () => {
    const markdown = renderMarkdown(comparison);
    const html = renderHtml(comparison);
    for (const c of comparison.cases) {
      expect(markdown).to.include(`/ ${c.testCase.name}\n`);
      expect(html).to.include(`/ ${c.testCase.name}</h3>`);
    }
    expect(markdown).to.include('## Latency');
  });
});
