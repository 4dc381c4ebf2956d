/**
 * `staticsite validate` remembers CRD files between runs by content (cli/validate/crd-cache.ts): the
 * built CLI as a process, run twice on the same files, must answer the same; an edited CRD, a CRD the
 * checks refuse, and an unreadable cache must change nothing but the speed.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { dump } from 'js-yaml';
import { thirdPartyModuleDir } from '../../devenv/third-party-crds.ts';
import { widgetCrd as sharedWidgetCrd } from '../fixtures/widget-crd.ts';
import { runBuiltCli } from '../support/built-cli.ts';

/** The fixture's Widget CRD with a spec of one defaulted, patterned name and one rule. */
function widgetCrd(rule: string, defaultName = 'a') {
  const crd = structuredClone(sharedWidgetCrd);
  const version = crd.spec.versions[0] as { schema: { openAPIV3Schema: { properties: Record<string, unknown> } } };
  version.schema.openAPIV3Schema.properties.spec = {
    type: 'object',
    properties: { name: { type: 'string', maxLength: 8, pattern: '^[a-z]+$', default: defaultName } },
    'x-kubernetes-validations': [{ rule, message: 'name must not be x' }],
  };
  return crd;
}

const WIDGET = dump({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'default' },
  spec: { name: 'x' },
});

describe('e2e: staticsite validate remembers CRD files by content (the built CLI)', function () {
  this.timeout(120_000);
  let dir: string;
  let cache: string;
  let crdFile: string;
  let objectFile: string;
  const run = (...extra: string[]) =>
    runBuiltCli(['validate', '--cache-dir', cache, '--crd', crdFile, ...extra, '-o', 'json', objectFile]);
  const entries = (kind: string) => {
    try {
      return readdirSync(join(cache, kind));
    } catch {
      return [];
    }
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'validate-cache-'));
    cache = join(dir, 'cache');
    crdFile = join(dir, 'crd.yaml');
    objectFile = join(dir, 'widget.yaml');
    writeFileSync(objectFile, WIDGET);
  });

  it('a second run answers as the first, from what the first remembered', async () => {
    writeFileSync(crdFile, dump(widgetCrd("self.name != 'x'")));
    const first = await run();
    const second = await run();
    expect(first.code).to.equal(1);
    expect(JSON.parse(first.stdout).status).to.equal('invalid');
    expect(second).to.deep.include({ code: first.code, stdout: first.stdout, stderr: first.stderr });
    expect(entries('documents')).to.have.length(1);
    expect(entries('accepted')).to.have.length(1);
  });

  it('a remembered file is not parsed again: what the cache holds for its content is used', async () => {
    writeFileSync(crdFile, dump(widgetCrd("self.name != 'x'")));
    expect((await run()).code).to.equal(1);
    const [entry] = entries('documents');
    writeFileSync(join(cache, 'documents', entry as string), JSON.stringify([widgetCrd("self.name != 'y'")]));
    const planted = await run();
    expect(JSON.parse(planted.stdout).status).to.equal('valid');
  });

  it('an edited CRD is read and checked anew: a default its pattern refuses is reported', async () => {
    writeFileSync(crdFile, dump(widgetCrd("self.name != 'x'")));
    expect((await run()).code).to.equal(1);
    writeFileSync(crdFile, dump(widgetCrd("self.name != 'x'", 'A1')));
    const edited = await run();
    expect(edited.code).to.equal(2);
    expect(edited.stderr).to.include('spec.validation.openAPIV3Schema.properties[spec].properties[name].default');
    expect(edited.stderr).to.include("should match '^[a-z]+$'");
  });

  it('a CRD the checks refuse is never remembered as accepted', async () => {
    writeFileSync(crdFile, dump(widgetCrd('self.name ==')));
    const first = await run();
    const second = await run();
    expect(first.code).to.equal(2);
    expect(first.stderr).to.include('Syntax error');
    expect(second).to.deep.include({ code: 2, stderr: first.stderr });
    expect(entries('accepted')).to.deep.equal([]);
  });

  it('a damaged cache entry is a miss, not an error', async () => {
    writeFileSync(crdFile, dump(widgetCrd("self.name != 'x'")));
    const first = await run();
    for (const name of entries('documents')) writeFileSync(join(cache, 'documents', name), '{"half');
    const second = await run();
    expect(second).to.deep.include({ code: first.code, stdout: first.stdout, stderr: first.stderr });
    const [entry] = entries('documents');
    expect(() => JSON.parse(readFileSync(join(cache, 'documents', entry as string), 'utf8'))).not.to.throw();
  });

  it("Gateway API's examples: the same results from a first run and from remembered CRDs (rules compiled on first use)", async () => {
    const gatewayApi = await thirdPartyModuleDir('gateway-api');
    const args = (...cacheFlags: string[]) => [
      'validate',
      ...cacheFlags,
      '--crd',
      join(gatewayApi, 'config', 'crd', 'experimental'),
      '--ignore-missing-schemas',
      '-o',
      'json',
      join(gatewayApi, 'examples'),
    ];
    const first = await runBuiltCli(args('--no-cache'));
    expect(first.stdout.trim().split('\n').length).to.be.greaterThan(100);
    await runBuiltCli(args('--cache-dir', cache));
    const remembered = await runBuiltCli(args('--cache-dir', cache));
    expect(entries('accepted').length).to.be.greaterThan(5);
    expect(remembered).to.deep.include({ code: first.code, stdout: first.stdout, stderr: first.stderr });
  });

  it('--no-cache remembers nothing', async () => {
    writeFileSync(crdFile, dump(widgetCrd("self.name != 'x'")));
    const result = await run('--no-cache');
    expect(result.code).to.equal(1);
    expect(entries('documents')).to.deep.equal([]);
  });
});
