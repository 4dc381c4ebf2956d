import { writeFile } from 'node:fs/promises';
import { CommandLine, positiveInt } from './flags.ts';
import { packageFile } from './package-root.ts';
import type { CommandIO } from './usage.ts';

const COMPARE = new CommandLine('compare', {
  corpus: { type: 'string', value: 'DIR', help: 'the cases (default devenv/compare/corpus)' },
  out: { type: 'string', value: 'report.md', help: 'write the Markdown report here (default standard output)' },
  html: { type: 'string', value: 'report.html', help: 'write an HTML report here as well' },
  json: { type: 'string', value: 'results.json', help: 'write the results as JSON here as well' },
  samples: { type: 'string', default: '100', value: 'N', help: 'latency samples per way' },
});

export const usage = COMPARE.synopsis();
export const help = COMPARE.help();

/** `staticsite compare`: schema-only, webhooks and admission policies, six ways, on a real control plane. */
export async function compareCommand(args: string[], io: CommandIO): Promise<number> {
  const { values } = COMPARE.parse(args);
  const samples = positiveInt('--samples', values.samples);
  // The development environment loads here, when the command runs: not for `compare --help`, never for another command.
  const [{ readCorpus }, { runComparison }, { renderHtml, renderMarkdown }, { ControlPlane }] = await Promise.all([
    import('../devenv/compare/corpus.ts'),
    import('../devenv/compare/run.ts'),
    import('../devenv/compare/report.ts'),
    import('../devenv/controlplane.ts'),
  ]);
  const corpusDir = values.corpus ?? packageFile('devenv', 'compare', 'corpus');
  const corpus = await readCorpus(corpusDir);
  const say = (line: string) => io.stderr(`${line}\n`);
  say(`${corpus.length} cases from ${corpusDir}; starting a control plane...`);
  // The policy status controller reports the validating policy's type checking, which way E requires clean.
  const cp = await new ControlPlane({ controllers: ['validatingadmissionpolicy-status-controller'] }).start();
  try {
    const comparison = await runComparison(cp, corpus, { latencySamples: samples, log: say });
    const markdown = renderMarkdown(comparison);
    if (values.out) {
      await writeFile(values.out, markdown);
      say(`wrote ${values.out}`);
    } else io.stdout(markdown);
    if (values.html) {
      await writeFile(values.html, renderHtml(comparison));
      say(`wrote ${values.html}`);
    }
    if (values.json) {
      await writeFile(values.json, `${JSON.stringify(comparison, null, 2)}\n`);
      say(`wrote ${values.json}`);
    }
    const unexplained = comparison.cases.filter((c) => c.differences.some((d) => !d.behaviour));
    return unexplained.length === 0 ? 0 : 1;
  } finally {
    await cp.stop();
  }
}

export { compareCommand as run };
