/**
 * `staticsite validate` as a CI validator: many paths and directories, several CRDs of any kind,
 * objects without a schema, a summary, and JUnit and TAP output.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { dump } from 'js-yaml';
import { buildCrd, CRD_NAME, type CustomResourceDefinition } from '../../api/index.ts';
import { run } from '../../cli/main.ts';
import { installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { builtCli } from '../../devenv/webhook-process.ts';
import { widgetCrd } from '../fixtures/widget-crd.ts';
import { testCluster } from '../support/shared.ts';

async function cli(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

const site = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'staticsite.dev/v1',
  kind: 'StaticSite',
  metadata: { name },
  spec,
});
const widget = (name: string, size: number) => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name },
  spec: { size },
});

const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: 'b' } };

/** The JUnit XML parsed by Python's xml.etree (a real XML parser): testsuite attributes and testcases. */
function parseJunit(xml: string) {
  const script = `
import json, sys, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.read())
suite = root.find('testsuite')
cases = [{'classname': c.get('classname'), 'name': c.get('name'),
          'outcome': next((child.tag for child in c), 'passed'),
          'message': next((child.get('message') for child in c), None)} for c in suite.findall('testcase')]
print(json.dumps({'root': root.tag, 'suite': dict(suite.attrib), 'cases': cases}))
`;
  const parsed = spawnSync('python3', ['-c', script], { input: xml, encoding: 'utf8' });
  if (parsed.status !== 0) throw new Error(`not XML: ${parsed.stderr}`);
  return JSON.parse(parsed.stdout) as {
    root: string;
    suite: Record<string, string>;
    cases: Array<{ classname: string; name: string; outcome: string; message: string | null }>;
  };
}

describe('cli: staticsite validate over many files, several CRDs', function () {
  this.timeout(60_000);
  let dir: string;
  const path = (...parts: string[]) => join(dir, ...parts);
  /** The real API server's denials of the two invalid objects, under the same two CRDs. */
  let bigDenial = '';
  let prodDenial = '';

  before(async function () {
    this.timeout(240_000);
    const { controlPlane: cp } = await testCluster();
    await cp.ensureNamespace('validate-many');
    await installCrd(cp.admin, widgetCrd as unknown as CustomResourceDefinition);
    await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
    const deny = async (path: string, object: unknown) => {
      const res = await cp.admin.post<{ code: number; message: string }>(path, object, { query: { dryRun: 'All' } });
      expect(res.body.code, JSON.stringify(res.body)).to.equal(422);
      return res.body.message;
    };
    bigDenial = await deny('/apis/example.com/v1/namespaces/validate-many/widgets', widget('big', 11));
    prodDenial = await deny(
      '/apis/staticsite.dev/v1/namespaces/validate-many/staticsites',
      site('prod', { content: 'x', tier: 'prod', replicas: 1 }),
    );
    await uninstallCrd(cp.admin, 'widgets.example.com');
    await uninstallCrd(cp.admin, CRD_NAME);

    dir = await mkdtemp(join(tmpdir(), 'validate-many-'));
    await mkdir(path('repo', 'apps', 'nested'), { recursive: true });
    await mkdir(path('crds'));
    await writeFile(path('crds', 'widget.yaml'), dump(widgetCrd));
    await writeFile(path('crds', 'README.md'), '# not a manifest\n');
    await writeFile(path('repo', 'apps', 'shop.yaml'), dump(site('shop', { content: 'x' })));
    await writeFile(
      path('repo', 'apps', 'nested', 'mixed.yml'),
      `${dump(widget('small', 3))}---\n${dump(widget('big', 11))}`,
    );
    await writeFile(
      path('repo', 'apps', 'nested', 'prod.json'),
      JSON.stringify(site('prod', { content: 'x', tier: 'prod', replicas: 1 })),
    );
    await writeFile(path('repo', 'apps', 'notes.txt'), 'kind: not a manifest\n');
    await writeFile(path('repo', 'config.yaml'), dump(configMap));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('walks directories for .yaml, .yml and .json in name order; each result names its file and document', async () => {
    const r = await cli(['validate', '--crd', path('crds'), '--ignore-missing-schemas', '-o', 'json', path('repo')]);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { file: string; document: number; status: string; message: string });
    expect(lines.map((l) => [l.file, l.document, l.status])).to.deep.equal([
      [path('repo', 'apps', 'nested', 'mixed.yml'), 1, 'valid'],
      [path('repo', 'apps', 'nested', 'mixed.yml'), 2, 'invalid'],
      [path('repo', 'apps', 'nested', 'prod.json'), 1, 'invalid'],
      [path('repo', 'apps', 'shop.yaml'), 1, 'valid'],
      [path('repo', 'config.yaml'), 1, 'skipped'],
    ]);
    // The Widget CRD's own rule, in the API server's words (as for the StaticSite rules).
    expect(lines[1]?.message).to.equal(bigDenial);
    expect(lines[2]?.message).to.equal(prodDenial);
    expect(r.code).to.equal(1);
  });

  it('an object whose kind has no CRD is an error (exit 2) unless --ignore-missing-schemas skips it; the summary counts', async () => {
    const strict = await cli([
      'validate',
      '--crd',
      path('crds', 'widget.yaml'),
      path('repo', 'config.yaml'),
      path('repo', 'apps', 'shop.yaml'),
    ]);
    expect(strict.code).to.equal(2);
    expect(strict.stdout).to.equal(
      `${path('repo', 'config.yaml')}: document 1: ConfigMap/settings: error: no schema for v1, Kind=ConfigMap: give its CRD with --crd, or pass --ignore-missing-schemas\n` +
        `${path('repo', 'apps', 'shop.yaml')}: document 1: StaticSite/shop: valid\n` +
        'Summary: 2 objects in 2 files: 1 valid, 0 invalid, 1 error, 0 skipped\n',
    );
    const lenient = await cli([
      'validate',
      '--ignore-missing-schemas',
      path('repo', 'config.yaml'),
      path('repo', 'apps', 'shop.yaml'),
    ]);
    expect(lenient.code).to.equal(0);
    expect(lenient.stdout).to.include(
      'ConfigMap/settings: skipped: no schema for v1, Kind=ConfigMap: give its CRD with --crd\n',
    );
    expect(lenient.stdout).to.include('Summary: 2 objects in 2 files: 1 valid, 0 invalid, 0 errors, 1 skipped\n');
  });

  it('-o junit is XML with a testcase per object: failures, errors and skips', async () => {
    const r = await cli(['validate', '--crd', path('crds'), '-o', 'junit', path('repo')]);
    expect(r.code).to.equal(2);
    const junit = parseJunit(r.stdout);
    expect(junit.root).to.equal('testsuites');
    expect(junit.suite).to.include({ tests: '5', failures: '2', errors: '1', skipped: '0' });
    expect(junit.cases.map((c) => [c.classname, c.name, c.outcome])).to.deep.equal([
      [path('repo', 'apps', 'nested', 'mixed.yml'), 'document 1: Widget/small', 'passed'],
      [path('repo', 'apps', 'nested', 'mixed.yml'), 'document 2: Widget/big', 'failure'],
      [path('repo', 'apps', 'nested', 'prod.json'), 'document 1: StaticSite/prod', 'failure'],
      [path('repo', 'apps', 'shop.yaml'), 'document 1: StaticSite/shop', 'passed'],
      [path('repo', 'config.yaml'), 'document 1: ConfigMap/settings', 'error'],
    ]);
    expect(junit.cases[1]?.message).to.equal(bigDenial);
  });

  it('-o tap is TAP version 13: a numbered test point per object, SKIP directives, the plan last', async () => {
    const r = await cli(['validate', '--crd', path('crds'), '--ignore-missing-schemas', '-o', 'tap', path('repo')]);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).to.equal('TAP version 13');
    expect(lines.at(-1)).to.equal('1..5');
    const points = lines.filter((l) => /^(not )?ok \d+ /.test(l));
    expect(points.map((l) => l.replace(/ - .*?( # SKIP .*)?$/, '$1'))).to.deep.equal([
      'ok 1',
      'not ok 2',
      'not ok 3',
      'ok 4',
      'ok 5 # SKIP no schema for v1, Kind=ConfigMap: give its CRD with --crd',
    ]);
    // The diagnostic block after a failure is YAML between "---" and "...".
    const block = lines.slice(lines.indexOf(points[1] ?? '') + 1, lines.indexOf(points[1] ?? '') + 5);
    expect(block[0]).to.equal('  ---');
    expect(block[1]).to.equal(`  message: ${JSON.stringify(bigDenial)}`);
    expect(block[3]).to.equal('  ...');
  });

  it('the built CLI as a process: the same JUnit from node dist/bin/staticsite.js', async () => {
    const args = ['validate', '--crd', path('crds'), '-o', 'junit', path('repo')];
    const child = spawnSync(process.execPath, [builtCli(), ...args], { encoding: 'utf8' });
    expect(child.status).to.equal(2);
    expect(child.stdout).to.equal((await cli(args)).stdout);
    expect(parseJunit(child.stdout).cases).to.have.length(5);
  });

  it('a missing path is an input error, exit 2', async () => {
    const r = await cli(['validate', path('repo'), path('nowhere')]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.equal(`staticsite validate: ${path('nowhere')}: cannot read file (ENOENT)\n`);
  });
});
