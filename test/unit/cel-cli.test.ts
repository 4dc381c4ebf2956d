import { expect } from 'chai';
import { run } from '../../cli/main.ts';

async function cel(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(['cel', ...argv], { stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

describe('cli: staticsite cel', () => {
  it('prints {"value": ...} and exits 0', async () => {
    expect(await cel("quantity('1Gi').asInteger()")).to.deep.equal({
      code: 0,
      stdout: '{"value":1073741824}\n',
      stderr: '',
    });
  });

  it('-o text prints the value alone, a string as it is; an error on stderr with exit 1', async () => {
    expect(await cel("quantity('1Gi').asInteger()", '-o', 'text')).to.deep.equal({
      code: 0,
      stdout: '1073741824\n',
      stderr: '',
    });
    expect(await cel("'a' + 'b'", '-o', 'text')).to.deep.equal({ code: 0, stdout: 'ab\n', stderr: '' });
    expect(await cel('1 / 0', '-o', 'text')).to.deep.equal({
      code: 1,
      stdout: '',
      stderr: 'error: division by zero\n',
    });
    const bad = await cel('1', '-o', 'yaml');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include('-o must be one of json, text, got "yaml"');
  });

  it('binds --self and --old-self; without --schema JSON integers are ints', async () => {
    const r = await cel(
      'type(self.a) == int && self.a + oldSelf.a == 5',
      '--self',
      '{"a": 2}',
      '--old-self',
      '{"a": 3}',
    );
    expect(r).to.deep.equal({ code: 0, stdout: '{"value":true}\n', stderr: '' });
  });

  it('types self from --schema (number -> double)', async () => {
    const r = await cel(
      'type(self.a)',
      '--self',
      '{"a": 2}',
      '--schema',
      '{"type":"object","properties":{"a":{"type":"number"}}}',
    );
    expect(JSON.parse(r.stdout)).to.deep.equal({ value: 'double' });
  });

  it('prints {"error": ...} and exits 1 for compile and runtime errors', async () => {
    const compile = await cel("1 == 'a'", '-o', 'json');
    expect(compile.code).to.equal(1);
    expect(JSON.parse(compile.stdout)).to.deep.equal({
      error:
        "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, string)'\n | 1 == 'a'\n | ..^",
    });
    const runtime = await cel('1 / 0 == 1');
    expect(runtime).to.deep.equal({ code: 1, stdout: '{"error":"division by zero"}\n', stderr: '' });
  });

  it('a missing expression or bad JSON is a usage error (exit 2)', async () => {
    expect((await cel()).code).to.equal(2);
    const bad = await cel('self', '--self', '{nope');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('--self: invalid JSON');
  });
});

describe('cli: staticsite cel stops at the API server per-call cost limit', () => {
  it('three nested maps over 300 strings: cel-go error text (interpreter: actual cost limit exceeded), quickly', async () => {
    const self = JSON.stringify(Array.from({ length: 300 }, (_, i) => `s${i}`));
    const started = performance.now();
    const r = await cel('self.map(a, self.map(b, self.map(c, a + b + c))).size()', '--self', self);
    expect(performance.now() - started).to.be.below(5000);
    expect(r).to.deep.equal({
      code: 1,
      stdout: '{"error":"operation cancelled: actual cost limit exceeded"}\n',
      stderr: '',
    });
  });
});
