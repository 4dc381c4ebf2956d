/**
 * `staticsite validate` reads YAML as kubectl does: every plain scalar below is resolved by the
 * kubectl built with the control plane (sigs.k8s.io/yaml over go-yaml v2, then encoding/json) and
 * by our reader, and the two must agree; the expected values are kubectl's output, not ours.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadAll } from 'js-yaml';
import { documentsOf } from '../../cli/validate/documents.ts';
import { parseJsonInt64, stringifyJson } from '../../crd/json-int64.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { indentationVariants } from '../fixtures/yaml/indentation-variants.ts';
import { testCluster } from '../support/shared.ts';

/** Plain scalars whose reading differs between YAML 1.1, YAML 1.2 and go-yaml. */
const SCALARS = [
  'y',
  'Y',
  'yes',
  'Yes',
  'YES',
  'n',
  'NO',
  'on',
  'Off',
  'true',
  'False',
  'TRUE',
  'yEs',
  'tRue',
  '~',
  'null',
  'Null',
  'NULL',
  'nULL',
  '',
  '0',
  '-0',
  '+12',
  '0755',
  '0o755',
  '0O17',
  '0x1F',
  '-0x1f',
  '0b101',
  '-0b101',
  '08',
  '09.5',
  '1_000',
  '_1',
  '1e3',
  '1E-2',
  '+1.5e+3',
  '.5',
  '-.5',
  '1.',
  '6.8523015e+5',
  '685_230.15',
  '1:20',
  '190:20:30',
  '9223372036854775807',
  '-9223372036854775808',
  '9007199254740993',
  '1e400',
  '0x_1F',
  '2001-12-14',
  '2001-12-14t21:59:43.10-05:00',
  '2001-12-14T21:59:43.10Z',
  '2001-12-14 21:59:43.10',
  '2001-2-3',
  '2001-02-30',
  '2001-12-14T21:59:43+00:00',
  '2024-02-29',
  '2023-02-29',
  '2001-12-14T21:59:43.123456789123Z',
  '.nan_',
  '.Inf_',

  '+',
  '.',

  '=',

  '12:30',
  '1,000',
  '0.1.2',
  '--1',
];

/** JSON with the keys of every object sorted, as Go's encoding/json writes a map. */
function sortedJson(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
              .map(([k, x]) => [k, sort(x)]),
          )
        : v;
  return JSON.stringify(sort(value) ?? null);
}

/** How a reader took one document: the JSON of its `x`, or a refusal. */
type Reading = { x: string } | { refused: string };

/**
 * kubectl's reading of each document (a ConfigMap named d<i>), all in one run: every document is a file of a
 * directory, kubectl prints the objects it read and names each file it could not read.
 */
async function kubectlReadings(cp: ControlPlane, documents: string[]): Promise<Reading[]> {
  const dir = await mkdtemp(join(tmpdir(), 'yaml-variants-'));
  try {
    const files = documents.map((_, i) => join(dir, `${String(i).padStart(5, '0')}.yaml`));
    await Promise.all(documents.map((text, i) => writeFile(files[i] as string, text)));
    const run = await cp.kubectl(['create', '--dry-run=client', '-o', 'json', '-f', dir]);
    const read = new Map<string, string>();
    for (const text of run.stdout.split(/\n(?=\{)/).filter((t) => t.trim() !== '')) {
      const object = JSON.parse(text) as { metadata: { name: string }; x?: unknown };
      read.set(object.metadata.name, sortedJson(object.x));
    }
    const refused = new Map<string, string>();
    for (const line of run.stderr.split('\n')) {
      const m = /^error: error parsing (\S+?): (.*)$/.exec(line);
      if (m) refused.set(m[1] as string, m[2] as string);
    }
    return documents.map((_, i) => {
      const x = read.get(`d${i}`);
      if (x !== undefined) return { x };
      return { refused: refused.get(files[i] as string) ?? `kubectl printed nothing for it: ${run.stderr}` };
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function ourReading(text: string): Promise<Reading> {
  const read = [];
  for await (const document of documentsOf([text])) read.push(document);
  const [first] = read;
  if (read.length !== 1 || !first) return { refused: `${read.length} documents` };
  if ('error' in first) return { refused: first.error };
  return { x: sortedJson((first.object as { x?: unknown }).x) };
}

/** Rows where kubectl and our reader disagree: a different value, or one reads what the other refuses. */
async function disagreements(cp: ControlPlane, documents: string[]) {
  const theirs = await kubectlReadings(cp, documents);
  const rows = [];
  for (const [i, text] of documents.entries()) {
    const kubectl = theirs[i] as Reading;
    const ours = await ourReading(text);
    // Duplicate keys are refused on purpose where kubectl keeps the last value (docs/validate-yaml.md).
    const duplicate = 'refused' in ours && ours.refused.endsWith('duplicated mapping key');
    const same = 'x' in kubectl ? ('x' in ours && ours.x === kubectl.x) || duplicate : 'refused' in ours;
    if (!same) rows.push({ document: text, kubectl, ours });
  }
  return { rows, accepted: theirs.filter((r) => 'x' in r).length };
}

describe('e2e: staticsite validate reads YAML scalars as kubectl does', function () {
  this.timeout(120_000);

  it(`${SCALARS.length} plain scalars: the same JSON values as kubectl create --dry-run=client -o json`, async () => {
    const { controlPlane: cp } = await testCluster();
    const yaml = SCALARS.map(
      (s, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c${i}\ndata:\n  v: ${s}\n`,
    ).join('---\n');
    const kubectl = await cp.kubectl(['create', '--dry-run=client', '-o', 'json', '-f', '-'], yaml);
    expect(kubectl.code, kubectl.stderr).to.equal(0);
    // One pretty-printed object per document, each opening at the start of a line.
    const theirs = kubectl.stdout
      .split(/\n(?=\{)/)
      .map((text) => (parseJsonInt64(text) as { data: { v?: unknown } }).data.v);
    const ours: unknown[] = [];
    for await (const document of documentsOf([yaml])) {
      expect(document, stringifyJson(document)).to.have.property('object');
      ours.push((document as { object: { data: { v: unknown } } }).object.data.v);
    }
    const rows = SCALARS.map((s, i) => ({ scalar: s, kubectl: theirs[i], ours: ours[i] }));
    // Every digit: an int64 beyond 2^53 is exact on both sides.
    const differing = rows.filter((r) => stringifyJson(r.kubectl) !== stringifyJson(r.ours));
    expect(stringifyJson(differing)).to.equal('[]');
  });

  for (const scalar of ['.inf', '-.Inf', '.NaN']) {
    it(`${scalar}: refused, as kubectl refuses it`, async () => {
      const { controlPlane: cp } = await testCluster();
      const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  v: ${scalar}\n`;
      const kubectl = await cp.kubectl(['create', '--dry-run=client', '-o', 'json', '-f', '-'], yaml);
      expect(kubectl.code).to.not.equal(0);
      const ours = [];
      for await (const document of documentsOf([yaml])) ours.push(document);
      expect(ours).to.have.length(1);
      const error = (ours[0] as { error?: string }).error ?? '';
      expect(error).to.match(/^json: unsupported value: /);
      expect(kubectl.stderr).to.include(error);
    });
  }
});

/**
 * Values of `x` from go-yaml v2's scanner (go.yaml.in/yaml/v2@v2.4.4 scannerc.go): flow collections, quoted
 * scalars and plain scalars inside flow collections continue at any column, tabs included, where YAML 1.2 wants
 * them indented past their block collection; a document indicator at column 0 ends a quoted scalar with an error;
 * in the block context a tab is whitespace only where no simple key may start (yaml_parser_scan_to_next_token),
 * right of a plain scalar's indentation and right of a block scalar's indentation.
 */
const HAND_DOCUMENTS = [
  'x:\n  b: "two\nlines"\n',
  "x:\n  b: 'two\nlines'\n",
  'x:\n  b: "two\n lines"\n',
  'x:\n  b: "two\n\n  lines\n"\n',
  'x:\n  b: "two\n  \tlines"\n',
  'x:\n  b: "escaped \\\nbreak"\n',
  'x:\n  c: [1,\n2]\n',
  'x:\n  c: {a: 1,\nb: 2}\n',
  'x:\n  c: [a\nb, c]\n',
  'x:\n  - [a,\nb]\n',
  'x:\n  - "a\n b"\n',
  'x:\n- y: "a\nb"\n  z: 1\n',
  'x:\n  y: {a: [1,\n2], b: "c\nd"}\n',
  "x:\n  y: ['a\nb']\n",
  'x: [\n]\n',
  'x: [a,\n\tb]\n',
  'x: {a:\t1}\n',
  'x:\n  y: [1,\t2]\n',
  'x: [a\tb]\n',
  'x: "a\n...\n b"\n',
  'x: "a\n...x\n b"\n',
  "x: 'a\n... b'\n",
  'x: [a,\n...\n]\n',
  'x:\n  c:\t[a,\nb]\n',
  // Tabs go-yaml refuses in the block context, and those it takes.
  'x:\n\t\n  y: 1\n',
  'x: 1\n\t# c\n',
  'x: 1\n  \t# c\n',
  'x:\n  - a\n  -\tb\n',
  'x:\n  - a\n  - \t\n',
  'x:\n  - - \ta\n',
  'x:\n  - \t# c\n    a\n',
  'x:\n  ? \ta\n  : b\n',
  'x:\n  ? a\n  :\tb\n',
  'x:\n  y: >\n   \ta\n',
  'x:\n  y: |\n    - \ta\n',
  'x:\n  y:\tone\n',
  'x:\n  y: one\t# c\n',
  "x:\n  y: 'one'\t# c\n",
  'x:\n  y: 1 \t\n',
  'x:\n  - y:\ta\n',
  'x: "a\tb"\n',
  // Block structure is not lenient: less indented content is refused by both.
  'x:\n  y:\n - a\n',
  'x:\n  y: one\n  two\n',
  'x:\n  y: one\n   two\n',
  'x:\n    y: 1\n  z: 2\n',
  'x:\n  y: |\n  text\n',
  'x:\n- a\n- b\n',
].map((body, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d${i}\n${body}`);

describe('e2e: staticsite validate reads YAML indentation as kubectl does', function () {
  this.timeout(120_000);

  it(`${HAND_DOCUMENTS.length} documents from go-yaml's scanner: the same values or refusals as kubectl`, async () => {
    const { controlPlane: cp } = await testCluster();
    expect((await disagreements(cp, HAND_DOCUMENTS)).rows).to.deep.equal([]);
  });

  it('generated documents: indentation and line breaks varied, the same values or refusals as kubectl', async () => {
    const { controlPlane: cp } = await testCluster();
    const documents = indentationVariants(400, 20261207);
    const { rows, accepted } = await disagreements(cp, documents);
    if (process.env.YAML_ROWS)
      (await import('node:fs')).writeFileSync(process.env.YAML_ROWS, JSON.stringify(rows, null, 1));
    expect(rows).to.deep.equal([]);
    // Both outcomes are exercised, and the leniency: a YAML 1.2 reading refuses many documents kubectl reads.
    expect(accepted).to.be.within(documents.length / 4, documents.length - 20);
    const strict = documents.filter((text) => {
      try {
        loadAll(text);
        return false;
      } catch {
        return true;
      }
    });
    expect(documents.length - strict.length).to.be.below(accepted - 50);
  });
});
