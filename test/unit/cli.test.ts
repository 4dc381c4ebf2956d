import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { load } from 'js-yaml';
import { buildCrd } from '../../api/index.ts';
import { run } from '../../cli/main.ts';
import { ApiError } from '../../kube/api-error.ts';

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
    expect(load(result.stdout)).to.deep.equal(buildCrd());
  });

  it('--schema-only prints the schema-only variant', async () => {
    const result = await cli('crd', '--schema-only');
    expect(load(result.stdout)).to.deep.equal(buildCrd({ schemaOnly: true }));
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
    expect(result.stderr).to.include('  crd              print the StaticSite CRD as YAML');
  });
});

describe('cli: staticsite --version', () => {
  it('prints the version of package.json and, from source (no build), commit unknown; exit 0, for --version and version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', 'version']) {
      const result = await cli(flag);
      expect(result).to.deep.equal({ code: 0, stdout: `staticsite ${version} (commit unknown)\n`, stderr: '' });
    }
  });
});

describe('cli: every command answers --help', () => {
  it('with its usage line and exit 0, for --help and -h', async () => {
    const list = (await cli('--help')).stdout;
    const names = [...list.matchAll(/^ {2}(\S+) {2,}/gm)].map((m) => m[1] ?? '');
    expect(names).to.include.members(['cel', 'certs', 'controller', 'validate', 'webhook']);
    for (const name of names) {
      for (const flag of ['--help', '-h']) {
        const result = await cli(name, flag);
        expect(result.code, `${name} ${flag}: ${result.stderr}`).to.equal(0);
        expect(result.stdout, name).to.match(new RegExp(`^usage: staticsite ${name}\\b`));
        expect(result.stderr).to.equal('');
      }
    }
  });
});

describe('cli: the error handler prints any thrown value', () => {
  const throwing = (value: unknown) => ({
    boom: {
      summary: 'throws',
      load: async () => ({ usage: 'staticsite boom', help: '', run: async () => Promise.reject(value) }),
    },
  });
  const runWith = async (value: unknown) => {
    const err: string[] = [];
    const code = await run(['boom'], { stdout: () => {}, stderr: (t) => err.push(t) }, throwing(value));
    return { code, stderr: err.join('') };
  };

  it('an API error with a numeric code (the HTTP status): exit 1 and its message', async () => {
    const error = new ApiError('GET', '/version', {
      code: 503,
      status: { reason: 'ServiceUnavailable', message: 'etcd is down' },
    });
    expect(await runWith(error)).to.deep.equal({
      code: 1,
      stderr: 'staticsite boom: GET /version: 503 ServiceUnavailable: etcd is down\n',
    });
  });

  it('a thrown object or string that is not an Error: exit 1 and the value', async () => {
    expect(await runWith({ code: 7, detail: 'x' })).to.deep.equal({
      code: 1,
      stderr: 'staticsite boom: {"code":7,"detail":"x"}\n',
    });
    expect(await runWith('plain text')).to.deep.equal({ code: 1, stderr: 'staticsite boom: plain text\n' });
  });
});
