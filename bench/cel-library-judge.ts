/**
 * The library choice, judged by the parity corpus: every CREATE case of test/e2e/cel-parity-corpus.ts with one rule
 * is evaluated by each candidate library on its own (no Kubernetes functions added, integers as BigInt per the
 * schema) and by crd/cel, and the verdict (allowed = rule true) is compared with the API server's verdict
 * recorded by the e2e parity test in $CEL_PARITY_RESULTS (default: <os tmpdir>/cel-parity-results.json).
 *   node bench/cel-library-judge.ts DIR
 * The candidates other than @marcbachmann/cel-js are not dependencies of this project: they are loaded from DIR,
 * a folder where `npm install @bufbuild/cel cel-js` has put them (docs/cel.md, "The library choice").
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Environment } from '@marcbachmann/cel-js';
import type { JSONSchemaProps } from '../crd/apiextensions.ts';
import { compileRules, evaluate } from '../crd/cel/index.ts';
import { ADMISSION_CASES } from '../test/e2e/cel-parity-corpus.ts';

type Verdict = 'allowed' | 'denied';
interface Candidate {
  name: string;
  run(rule: string, self: unknown): Verdict;
}

const celbenchArg = process.argv[2];
if (!celbenchArg) {
  process.stderr.write(
    'usage: node bench/cel-library-judge.ts DIR  (a directory whose node_modules holds the candidate CEL libraries)\n',
  );
  process.exit(2);
}
const celbench = resolve(celbenchArg);
const requireFromCelbench = createRequire(`${celbench}/package.json`);

function withBigInts(v: unknown, s: JSONSchemaProps | undefined): unknown {
  if (v === null || v === undefined || !s) return v;
  if (s.type === 'integer' && typeof v === 'number') return BigInt(v);
  if (s['x-kubernetes-int-or-string'] && typeof v === 'number') return BigInt(v);
  if (Array.isArray(v)) return v.map((x) => withBigInts(x, s.items));
  if (typeof v === 'object') {
    const ap = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, withBigInts(x, ap ?? s.properties?.[k])]));
  }
  return v;
}

const verdictOf = (f: () => unknown): Verdict => {
  try {
    return f() === true ? 'allowed' : 'denied';
  } catch {
    return 'denied';
  }
};

async function candidates(): Promise<Candidate[]> {
  const marc = new Environment({ unlistedVariablesAreDyn: true, enableOptionalTypes: true });
  const list: Candidate[] = [
    { name: '@marcbachmann/cel-js 8.0.0 (alone)', run: (rule, self) => verdictOf(() => marc.evaluate(rule, { self })) },
  ];
  try {
    const bb = await import(requireFromCelbench.resolve('@bufbuild/cel'));
    const ext = await import(requireFromCelbench.resolve('@bufbuild/cel/ext'));
    const env = bb.celEnv({ funcs: ext.strings });
    list.push({
      name: '@bufbuild/cel 0.6.1 (+ext strings, alone)',
      run: (rule, self) =>
        verdictOf(() => {
          const r = bb.plan(env, bb.parse(rule))({ self });
          if (bb.isCelError(r)) throw r;
          return r;
        }),
    });
  } catch (error) {
    console.error(
      `@bufbuild/cel not found under ${celbench} (${(error as Error).message.split('\n')[0]}); run npm install there`,
    );
  }
  return list;
}

interface ServerResult {
  id: string;
  group: string;
  server: { verdict: string };
}

const resultsFile = process.env.CEL_PARITY_RESULTS ?? join(tmpdir(), 'cel-parity-results.json');
const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as ServerResult[];
const serverVerdict = new Map(results.map((r) => [r.id, r.server.verdict]));

const cases = ADMISSION_CASES.map((c, i) => ({ c, id: `c${i}` })).filter(
  ({ c, id }) =>
    c.old === undefined && (c.schema['x-kubernetes-validations'] ?? []).length === 1 && serverVerdict.has(id),
);
const ours: Candidate = {
  name: 'crd/cel (@marcbachmann/cel-js + our environment)',
  run: () => 'denied',
};
const all = [...(await candidates()), ours];
const table = new Map<string, Map<string, { agree: number; total: number }>>();
for (const { c, id } of cases) {
  const rule = (c.schema['x-kubernetes-validations'] ?? [])[0]?.rule ?? '';
  const expected = serverVerdict.get(id);
  const self = withBigInts(c.value, c.schema);
  for (const cand of all) {
    let verdict: Verdict;
    if (cand === ours) {
      const schema: JSONSchemaProps = {
        type: 'object',
        properties: { spec: { type: 'object', properties: { x: c.schema } } },
      };
      const { compiled } = compileRules(schema);
      verdict = evaluate(compiled, { spec: { x: c.value } }).errors.length === 0 ? 'allowed' : 'denied';
    } else verdict = cand.run(rule, self);
    const byGroup = table.get(cand.name) ?? new Map<string, { agree: number; total: number }>();
    table.set(cand.name, byGroup);
    for (const g of [c.group, 'ALL']) {
      const cell = byGroup.get(g) ?? { agree: 0, total: 0 };
      cell.total++;
      if (verdict === expected) cell.agree++;
      byGroup.set(g, cell);
    }
  }
}
const groups = [...new Set(cases.map(({ c }) => c.group)), 'ALL'];
console.log(
  `${cases.length} single-rule CREATE cases of the parity corpus; cell = verdicts equal to kube-apiserver v1.37.2's\n`,
);
console.log(`| group | ${all.map((c) => c.name).join(' | ')} |`);
console.log(`|---|${all.map(() => '---').join('|')}|`);
for (const g of groups) {
  console.log(
    `| ${g} | ${all
      .map((c) => {
        const x = table.get(c.name)?.get(g);
        return x ? `${x.agree}/${x.total}` : '-';
      })
      .join(' | ')} |`,
  );
}
