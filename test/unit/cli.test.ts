import { expect } from 'chai';
import { parse } from 'yaml';
import { buildCrd } from '../../api/index.ts';
import { run } from '../../cli/main.ts';

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

describe('cli: staticsite crd', () => {
  it('prints the CRD as YAML that parses back to the built object', async () => {
    const result = await cli('crd');
    expect(result.code).to.equal(0);
    expect(parse(result.stdout)).to.deep.equal(buildCrd());
  });

  it('--schema-only prints the schema-only variant', async () => {
    const result = await cli('crd', '--schema-only');
    expect(parse(result.stdout)).to.deep.equal(buildCrd({ schemaOnly: true }));
  });

  it('an unknown flag is a usage error: exit 2 and a one-line reason', async () => {
    const result = await cli('crd', '--bogus');
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include("staticsite crd: Unknown option '--bogus'");
    expect(result.stdout).to.equal('');
  });

  it('an unknown command is a usage error that lists the commands', async () => {
    const result = await cli('frobnicate');
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include('unknown command "frobnicate"');
    expect(result.stderr).to.include('  crd          print the StaticSite CRD as YAML');
  });
});
