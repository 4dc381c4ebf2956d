import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { Comparison } from '../../devenv/compare/run.ts';
import { builtCli } from '../../devenv/webhook-process.ts';

const run = promisify(execFile);

describe('e2e: `staticsite compare` (the built CLI as a process): schema-only, webhooks and admission policies, six ways', function () {
  this.timeout(600_000);
  let comparison: Comparison;
  let markdown: string;
  let html: string;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'compare-e2e-'));
    const files = { out: join(dir, 'report.md'), html: join(dir, 'report.html'), json: join(dir, 'report.json') };
    // Its own control plane, as a user's run has; the webhook in columns B, C and D is the built CLI's.
    await run(
      process.execPath,
      [builtCli(), 'compare', `--out=${files.out}`, `--html=${files.html}`, `--json=${files.json}`, '--samples=10'],
      { maxBuffer: 16 << 20 },
    );
    comparison = JSON.parse(await readFile(files.json, 'utf8')) as Comparison;
    markdown = await readFile(files.out, 'utf8');
    html = await readFile(files.html, 'utf8');
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
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

  it('every difference between the ways is a documented behaviour', () => {
    const unexplained = comparison.cases.flatMap((c) =>
      c.differences.filter((d) => !d.behaviour).map((d) => `${c.testCase.name}: ${d.aspect} in ${d.modes.join(',')}`),
    );
    expect(unexplained).to.deep.equal([]);
  });

  it('all six ways give the same verdict on every case the schema can express', () => {
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

  it('E and F enforce what the report says: the validating policy the in-object rules, the mutating policy the mutations', () => {
    // What a policy can see (the object, its old version, its namespace, parameters) decides it.
    const status = (rule: string) => comparison.rules.find((r) => r.rule.startsWith(rule))?.ways;
    for (const rule of ['prod sites need 2 replicas', 'hostname is an RFC 1123 subdomain', 'tier is immutable']) {
      expect(status(rule)?.E, rule).to.equal('enforced, other message');
      expect(status(rule)?.F, rule).to.equal('enforced'); // F keeps the CRD's own rules
    }
    expect(status('one site per hostname')).to.include({ E: 'not expressible', F: 'not expressible', C: 'enforced' });
    expect(status('hostname defaulted')).to.include({ E: 'not expressible', F: 'enforced' });
    expect(status('finalizer added at admission')).to.include({ E: 'not expressible', F: 'enforced' });
    for (const row of comparison.rules) {
      expect(markdown, row.rule).to.include(`| ${row.rule} | ${row.cases.join(', ')} |`);
    }

    // The denial as kube-apiserver words a ValidatingAdmissionPolicy's (validating/dispatcher.go), a 422 for reason Invalid.
    const prod = comparison.cases.find((c) => c.testCase.name === 'prod-one-replica');
    expect(prod?.outcomes.E.code).to.equal(422);
    expect(prod?.outcomes.E.message).to.equal(
      "staticsites.staticsite.dev \"prod1\" is forbidden: ValidatingAdmissionPolicy 'staticsite-rules' with binding 'staticsite-rules' denied request: prod sites need at least 2 replicas",
    );
    const tier = comparison.cases.find((c) => c.testCase.name === 'tier-change');
    expect(tier?.outcomes.E.allowed).to.equal(false);
    expect(tier?.outcomes.E.message).to.match(/denied request: tier is immutable$/);
    // The mutating policy: the finalizer and the namespace's hostname, as the webhook's.
    const defaulted = comparison.cases.find((c) => c.testCase.name === 'hostname-default');
    expect(defaulted?.outcomes.F.finalizers).to.deep.equal(['staticsite.dev/external-record']);
    if (!defaulted) throw new Error('no hostname-default case');
    expect((defaulted.outcomes.F.spec as { hostname?: string }).hostname).to.equal(
      `${(defaulted.testCase.object.metadata as { name: string }).name}.compare-f.sites.staticsite.dev`,
    );
    // Mutating admission runs before the schema: the policy must let the schema answer objects it refuses.
    const missing = comparison.cases.find((c) => c.testCase.name === 'spec-missing');
    expect(missing?.outcomes.F.message).to.equal(missing?.outcomes.A.message);
  });

  it('the report lists every case, in Markdown and in HTML, and charts the latency per way', () => {
    for (const c of comparison.cases) {
      expect(markdown).to.include(`/ ${c.testCase.name}\n`);
      expect(html).to.include(`/ ${c.testCase.name}</h3>`);
    }
    expect(markdown).to.include('## Latency');
    expect(markdown).to.include('## What to use when');
    const chart = /<svg role="img" aria-label="latency per way[\s\S]*?<\/svg>/.exec(html)?.[0] ?? '';
    for (const mode of ['A', 'B', 'C', 'D', 'E', 'F']) {
      expect(chart, mode).to.include(`<title>${mode} median ${comparison.latency[mode as 'A'].medianMs} ms</title>`);
    }
  });
});
