import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { dump } from 'js-yaml';
import { buildCrd } from '../../api/index.ts';
import { run } from '../../cli/main.ts';

async function cli(argv: string[], stdin = '') {
  const out: string[] = [];
  const err: string[] = [];
  const io = { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t), readStdin: async () => stdin };
  const code = await run(argv, io);
  return { code, stdout: out.join(''), stderr: err.join('') };
}

const site = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'staticsite.dev/v1',
  kind: 'StaticSite',
  metadata: { name },
  spec,
});

describe('cli: staticsite validate', () => {
  let dir: string;
  const file = (name: string) => join(dir, name);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'validate-cli-'));
    await writeFile(file('good.yaml'), dump(site('shop', { content: '<h1>hi</h1>' })));
    await writeFile(
      file('multi.yaml'),
      `${dump(site('shop', { content: 'x' }))}---\n${dump(site('bad', { replicas: 0 }))}---\n`,
    );
    await writeFile(file('unknown.yaml'), dump(site('shop', { content: 'x', colour: 'red' })));
    await writeFile(file('broken.yaml'), 'apiVersion: v1\nkind: [StaticSite\nmetadata: {}\n');
    await writeFile(file('dupkeys.yaml'), `${dump(site('shop', { content: 'x' }))}spec:\n  content: y\n  content: z\n`);
    await writeFile(file('crd.yaml'), dump(buildCrd({ withoutCelRules: true })));
    await writeFile(file('not-a-crd.yaml'), 'kind: ConfigMap\n');
    await writeFile(
      file('old.yaml'),
      dump({ ...site('shop', { content: 'x' }), metadata: { name: 'shop', namespace: 'default' } }),
    );
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a valid object: exit 0, and -o json prints the defaulted object', async () => {
    const r = await cli(['validate', '-o', 'json', file('good.yaml')]);
    expect(r.code).to.equal(0);
    const line = JSON.parse(r.stdout);
    expect(line).to.include({ allowed: true, code: 200, message: '' });
    expect(line.errors).to.deep.equal([]);
    expect(line.object.spec).to.deep.equal({ content: '<h1>hi</h1>', replicas: 1, tier: 'dev' });
    expect(line.object.metadata).to.include({ namespace: 'default', generation: 1 });
  });

  it('multi-document YAML: one JSON line per document, exit 1 when one is denied', async () => {
    const r = await cli(['validate', '-o', 'json', file('multi.yaml')]);
    expect(r.code).to.equal(1);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.allowed, l.code])).to.deep.equal([
      [true, 200],
      [false, 422],
    ]);
    // api/errors/errors.go:309 and kube-openapi errors/schema.go:35
    expect(lines[1].errors).to.include(
      'spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1',
    );
    expect(lines[1].errors).to.include('spec.content: Required value');
    expect(lines[1].message).to.match(/^StaticSite\.staticsite\.dev "bad" is invalid: \[/);
  });

  it('reads standard input for -', async () => {
    const r = await cli(['validate', '-o', 'json', '-'], JSON.stringify(site('shop', { content: 'x' })));
    expect(r.code).to.equal(0);
    expect(JSON.parse(r.stdout).allowed).to.equal(true);
  });

  it('field validation: Strict (the default, like kubectl) denies unknown fields with a 400', async () => {
    const r = await cli(['validate', '-o', 'json', file('unknown.yaml')]);
    expect(r.code).to.equal(1);
    const line = JSON.parse(r.stdout);
    expect(line.code).to.equal(400);
    // handlers/rest.go:252 and runtime/error.go:140
    expect(line.message).to.equal(
      'StaticSite in version "v1" cannot be handled as a StaticSite: strict decoding error: unknown field "spec.colour"',
    );
    expect(line.errors).to.deep.equal(['unknown field "spec.colour"']);
  });

  it('field validation: Warn allows with a warning, Ignore allows silently', async () => {
    const warn = JSON.parse(
      (await cli(['validate', '-o', 'json', '--field-validation', 'Warn', file('unknown.yaml')])).stdout,
    );
    expect(warn).to.include({ allowed: true });
    expect(warn.warnings).to.deep.equal(['unknown field "spec.colour"']);
    const ignore = JSON.parse(
      (await cli(['validate', '-o', 'json', '--field-validation', 'Ignore', file('unknown.yaml')])).stdout,
    );
    expect(ignore.warnings).to.deep.equal([]);
    expect(ignore.object.spec).to.not.have.property('colour');
  });

  it('text output names each object and prints warnings', async () => {
    const r = await cli(['validate', '--field-validation', 'Warn', file('unknown.yaml')]);
    expect(r.stdout).to.equal(
      `Warning: unknown field "spec.colour"\n${file('unknown.yaml')}: document 1: StaticSite/shop: valid\n` +
        'Summary: 1 object in 1 file: 1 valid, 0 invalid, 0 errors, 0 skipped\n',
    );
  });

  it('--crd and --version choose the schema', async () => {
    const r = await cli(
      ['validate', '--crd', file('crd.yaml'), '--version', 'v1alpha1', '-o', 'json', '-'],
      JSON.stringify({
        ...site('shop', { content: 'x', hostname: 'h' }),
        apiVersion: 'staticsite.dev/v1alpha1',
      }),
    );
    const line = JSON.parse(r.stdout);
    // v1alpha1 has no hostname: Strict decoding rejects it
    expect(line.message).to.equal(
      'StaticSite in version "v1alpha1" cannot be handled as a StaticSite: strict decoding error: unknown field "spec.hostname"',
    );
  });

  it('--old validates an update (metadata.name is immutable)', async () => {
    const r = await cli(
      ['validate', '--old', file('old.yaml'), '-o', 'json', '-'],
      JSON.stringify(site('other', { content: 'x' })),
    );
    expect(r.code).to.equal(1);
    // apimachinery api/validation/objectmeta.go:37 (FieldImmutableErrorMsg) and :140 (ValidateImmutableField)
    expect(JSON.parse(r.stdout).errors).to.include('metadata.name: Invalid value: "other": field is immutable');
  });

  it('--old with a new object that names no namespace or uid: both come from the stored object (rest.BeforeUpdate)', async () => {
    const stored = {
      ...site('shop', { content: 'x' }),
      metadata: { name: 'shop', namespace: 'team-a', uid: '6f1c1f4e-0d6b-4d35-9a3c-0c2e9f0b1a2d', generation: 3 },
    };
    await writeFile(file('stored.yaml'), dump(stored));
    const r = await cli(
      ['validate', '--old', file('stored.yaml'), '-o', 'json', '-'],
      JSON.stringify(site('shop', { content: 'y' })),
    );
    expect(r.stderr).to.equal('');
    const line = JSON.parse(r.stdout);
    expect(line.errors).to.deep.equal([]);
    expect(line.allowed).to.equal(true);
    expect(line.object.metadata).to.include({
      namespace: 'team-a',
      uid: '6f1c1f4e-0d6b-4d35-9a3c-0c2e9f0b1a2d',
      generation: 4,
    });
  });

  it("--crd runs that CRD's own CEL rules", async () => {
    const crd = buildCrd({ schemaOnly: true });
    const spec = crd.spec.versions.find((v) => v.name === 'v1')?.schema.openAPIV3Schema.properties?.spec;
    if (spec) spec['x-kubernetes-validations'] = [{ rule: "self.content != 'x'", message: 'content must not be x' }];
    await writeFile(file('rule-crd.yaml'), dump(crd));
    await writeFile(file('x.yaml'), dump(site('shop', { content: 'x' })));
    const r = await cli(['validate', '--crd', file('rule-crd.yaml'), '-o', 'json', file('x.yaml')]);
    expect(r.code).to.equal(1);
    expect(JSON.parse(r.stdout).errors).to.deep.equal(['spec: Invalid value: content must not be x']);
  });

  describe('bad input: exit 2 and one line naming the file', () => {
    it('an unreadable file', async () => {
      const r = await cli(['validate', file('missing.yaml')]);
      expect(r.code).to.equal(2);
      expect(r.stderr).to.equal(`staticsite validate: ${file('missing.yaml')}: cannot read file (ENOENT)\n`);
      expect(r.stdout).to.equal('');
    });

    it('YAML that does not parse: an error result with line and column; the files after it still count', async () => {
      const r = await cli(['validate', file('broken.yaml'), file('good.yaml')]);
      expect(r.code).to.equal(2);
      expect(r.stderr).to.equal('');
      expect(r.stdout).to.match(
        new RegExp(`^${file('broken.yaml')}: document 1: error: line \\d+, column \\d+: invalid YAML: `),
      );
      expect(r.stdout).to.include(`${file('good.yaml')}: document 1: StaticSite/shop: valid\n`);
      expect(r.stdout).to.match(/Summary: 2 objects in 2 files: 1 valid, 0 invalid, 1 error, 0 skipped\n$/);
    });

    it('duplicate keys: the last one counts (as kubectl reads YAML), named as the server names them in JSON', async () => {
      const strict = await cli(['validate', '-o', 'json', file('dupkeys.yaml')]);
      expect(strict.code).to.equal(1);
      expect(JSON.parse(strict.stdout)).to.deep.include({
        code: 400,
        message:
          'StaticSite in version "v1" cannot be handled as a StaticSite: strict decoding error: duplicate field "spec", duplicate field "spec.content"',
      });
      const warn = await cli(['validate', '--field-validation', 'Warn', '-o', 'json', file('dupkeys.yaml')]);
      expect(warn.code).to.equal(0);
      const line = JSON.parse(warn.stdout) as { warnings: string[]; object: { spec: { content: string } } };
      expect(line.warnings).to.deep.equal(['duplicate field "spec"', 'duplicate field "spec.content"']);
      expect(line.object.spec.content).to.equal('z');
      const ignore = await cli(['validate', '--field-validation', 'Ignore', file('dupkeys.yaml')]);
      expect(ignore.code).to.equal(0);
    });

    it('bad JSON on standard input', async () => {
      const r = await cli(['validate', '-'], '{"kind": "StaticSite",');
      expect(r.code).to.equal(2);
      expect(r.stdout).to.match(/^<stdin>: document 1: error: line \d+, column \d+: invalid YAML: /);
    });

    it('a file that cannot be read: an error result naming it; the other files still count', async () => {
      // /proc/self/mem opens but does not read at offset 0 (EIO), even for root.
      const r = await cli(['validate', '/proc/self/mem', file('good.yaml')]);
      expect(r.code).to.equal(2);
      expect(r.stdout).to.equal(
        `/proc/self/mem: error: cannot read file (EIO)\n${file('good.yaml')}: document 1: StaticSite/shop: valid\n` +
          'Summary: 2 objects in 2 files: 1 valid, 0 invalid, 1 error, 0 skipped\n',
      );
    });

    it("a YAML alias bomb (billion laughs) in the third document: go-yaml's refusal for that document only", async () => {
      const bomb = [
        'a: &a ["x","x","x","x","x","x","x","x","x"]',
        'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
        'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
        'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
        'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
        'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
      ].join('\n');
      const good = dump(site('shop', { content: 'x' }));
      await writeFile(file('bomb.yaml'), `${good}---\n${good}---\n${bomb}\n`);
      const r = await cli(['validate', file('bomb.yaml')]);
      expect(r.code).to.equal(2);
      // go-yaml v2 (decode.go, the fix for CVE-2019-11253), which kubectl reads YAML with.
      expect(r.stdout).to.include(
        `${file('bomb.yaml')}: document 3: error: invalid YAML: document contains excessive aliasing\n`,
      );
      expect(r.stdout).to.include('2 valid, 0 invalid, 1 error');
    });

    it('an empty input', async () => {
      const r = await cli(['validate', '-'], '---\n');
      expect(r.code).to.equal(2);
      expect(r.stderr).to.equal('staticsite validate: <stdin>: no objects to validate\n');
    });

    it('a --crd file without a CRD', async () => {
      const r = await cli(['validate', '--crd', file('not-a-crd.yaml'), file('good.yaml')]);
      expect(r.code).to.equal(2);
      expect(r.stderr).to.equal(
        `staticsite validate: ${file('not-a-crd.yaml')}: no CustomResourceDefinition in the file\n`,
      );
    });

    it('a --crd directory with a file without a CRD: the file is skipped with a note, the CRDs are used', async () => {
      const crds = file('crds-and-policy');
      await mkdir(crds);
      await writeFile(
        join(crds, 'a-policy.yaml'),
        'apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n',
      );
      await writeFile(join(crds, 'crd.yaml'), dump(buildCrd({ withoutCelRules: true })));
      const r = await cli(['validate', '--crd', crds, file('good.yaml')]);
      expect(r.stderr).to.equal(
        `staticsite validate: note: ${join(crds, 'a-policy.yaml')}: no CustomResourceDefinition, skipped\n`,
      );
      expect(r.code).to.equal(0);
    });

    it('a version the CRD does not have', async () => {
      const r = await cli(['validate', '--version', 'v9', file('good.yaml')]);
      expect(r.code).to.equal(2);
      expect(r.stderr).to.equal(
        'staticsite validate: CRD staticsites.staticsite.dev has no version "v9" (it has: v1alpha1, v1)\n',
      );
    });

    it('a bad --field-validation or -o value, or no FILE: usage errors', async () => {
      for (const argv of [
        ['validate', '--field-validation', 'Loose', file('good.yaml')],
        ['validate', '-o', 'yaml', file('good.yaml')],
        ['validate'],
        ['validate', '--bogus', file('good.yaml')],
      ]) {
        const r = await cli(argv);
        expect(r.code, argv.join(' ')).to.equal(2);
        expect(r.stderr, argv.join(' ')).to.match(/^staticsite validate: .+\nusage: staticsite validate /);
      }
    });
  });
});

describe('cli: staticsite validate runs the CRD CEL rules', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'validate-cel-'));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('denies prod with 1 replica with the message the API server gives (test/e2e/controlplane.test.ts)', async () => {
    await writeFile(join(dir, 'prod.yaml'), dump(site('shop', { content: 'x', tier: 'prod', replicas: 1 })));
    const result = await cli(['validate', join(dir, 'prod.yaml')]);
    expect(result.code).to.equal(1);
    expect(result.stdout).to.include(
      'StaticSite.staticsite.dev "shop" is invalid: spec: Invalid value: prod sites need at least 2 replicas',
    );
  });

  it('a CRD whose rule does not type-check is an input error: exit 2', async () => {
    const crd = buildCrd({ schemaOnly: true });
    const spec = crd.spec.versions[0]?.schema.openAPIV3Schema.properties?.spec;
    if (spec) spec['x-kubernetes-validations'] = [{ rule: "self.replicas == 'two'" }];
    await writeFile(join(dir, 'bad-crd.yaml'), dump(crd));
    await writeFile(join(dir, 'ok.yaml'), dump(site('shop', { content: 'x' })));
    const result = await cli(['validate', '--crd', join(dir, 'bad-crd.yaml'), join(dir, 'ok.yaml')]);
    expect(result.code).to.equal(2);
    // What kube-apiserver answers when such a CRD is written: one version, so the schema sits in
    // spec.validation (test/e2e/regexp-parity.test.ts and the CEL parity compile cases check it).
    expect(result.stderr).to.include(
      'CustomResourceDefinition.apiextensions.k8s.io "staticsites.staticsite.dev" is invalid: spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value:',
    );
    expect(result.stderr).to.include('no matching overload');
  });
});

describe('cli: staticsite validate with a catastrophic pattern (Go regexps run in linear time)', () => {
  it('^(a+)+$ on 30 characters answers at once with the API server message', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'validate-redos-'));
    try {
      const crd = buildCrd({ schemaOnly: true });
      const spec = crd.spec.versions[0]?.schema.openAPIV3Schema.properties?.spec;
      if (spec?.properties) spec.properties.content = { type: 'string', pattern: '^(a+)+$' };
      await writeFile(join(dir, 'crd.yaml'), dump(crd));
      await writeFile(join(dir, 'site.yaml'), dump(site('shop', { content: `${'a'.repeat(30)}!` })));
      const started = performance.now();
      const result = await cli(['validate', '--crd', join(dir, 'crd.yaml'), join(dir, 'site.yaml')]);
      expect(performance.now() - started).to.be.below(2000);
      expect(result.code).to.equal(1);
      // kube-openapi errors.FailedPattern, as test/e2e/regexp-parity.test.ts sees from the API server.
      expect(result.stdout).to.include("spec.content in body should match '^(a+)+$'");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
