/**
 * `staticsite validate` remembers CRD files between runs by content (cli/validate/crd-cache.ts): the
 * built CLI as a process, run twice on the same files, must answer the same; an edited CRD, a CRD the
 * checks refuse, and an unreadable cache must change nothing but the speed.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { dump } from 'js-yaml';
import type { CustomResourceDefinition } from '../../api/index.ts';
import { encodeEntry } from '../../cli/validate/crd-cache.ts';
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

/** Every file below `dir`. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

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
    expect(entries('crds')).to.have.length(1);
    expect(entries('accepted')).to.have.length(1);
  });

  it('a remembered file is not parsed again: what the cache holds for its content is used', async () => {
    writeFileSync(crdFile, dump(widgetCrd("self.name != 'x'")));
    expect((await run()).code).to.equal(1);
    const [entry] = entries('crds');
    writeFileSync(
      join(cache, 'crds', entry as string),
      encodeEntry([widgetCrd("self.name != 'y'") as unknown as CustomResourceDefinition]),
    );
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

  it('a damaged cache entry is a miss, not an error, and is written again', async () => {
    writeFileSync(crdFile, dump(widgetCrd("self.name != 'x'")));
    const first = await run();
    const [entry = ''] = entries('crds');
    const path = join(cache, 'crds', entry);
    const written = readFileSync(path, 'utf8');
    const damages = [
      '{"half',
      // the index intact, the CRD's line changed: a wider maxLength, valid JSON still
      written.replace('"maxLength":8', '"maxLength":9'),
      // the CRD intact, the index changed
      written.replace('"Widget"', '"Gadget"'),
    ];
    for (const damaged of damages) {
      expect(damaged).to.not.equal(written);
      writeFileSync(path, damaged);
      const again = await run();
      expect(again).to.deep.include({ code: first.code, stdout: first.stdout, stderr: first.stderr });
      expect(readFileSync(path, 'utf8')).to.equal(written);
    }
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

  it("Node's compile cache: damaged, stale or unwritable, it changes nothing but the speed", async () => {
    writeFileSync(crdFile, dump(widgetCrd("self.name != 'x'")));
    const home = join(dir, 'home');
    const args = ['validate', '--no-cache', '--crd', crdFile, '-o', 'json', objectFile];
    const withHome = (xdg: string) => runBuiltCli(args, { env: { XDG_CACHE_HOME: xdg, NODE_COMPILE_CACHE: '' } });
    const uncached = await runBuiltCli(args, { env: { NODE_DISABLE_COMPILE_CACHE: '1' } });
    expect(uncached.code).to.equal(1);
    const same = { code: uncached.code, stdout: uncached.stdout, stderr: uncached.stderr };
    expect(await withHome(home)).to.deep.include(same);
    const entries = filesUnder(join(home, 'staticsite', 'compile'));
    expect(entries.length).to.be.greaterThan(3);
    // stale: every entry holds another module's code
    const [first, ...rest] = entries.map((f) => readFileSync(f));
    for (const [i, f] of entries.entries()) writeFileSync(f, rest[i] ?? (first as Buffer));
    expect(await withHome(home)).to.deep.include(same);
    // damaged: every entry cut in half, then garbage
    for (const f of entries) writeFileSync(f, readFileSync(f).subarray(0, statSync(f).size >> 1));
    expect(await withHome(home)).to.deep.include(same);
    for (const f of entries) writeFileSync(f, 'not V8 code');
    expect(await withHome(home)).to.deep.include(same);
    // unwritable: the cache home is a file
    expect(await withHome(objectFile)).to.deep.include(same);
  });

  it('--no-cache remembers nothing', async () => {
    writeFileSync(crdFile, dump(widgetCrd("self.name != 'x'")));
    const result = await run('--no-cache');
    expect(result.code).to.equal(1);
    expect(entries('crds')).to.deep.equal([]);
  });
});
