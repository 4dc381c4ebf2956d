import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';

// A parent under coverage spawns a child, as the test runner under c8 does: Node's spawn decides
// what the child sees.
const parentScript = (withHelper: boolean) => `
  import { spawnSync } from 'node:child_process';
  import { uninstrumentedEnv } from ${JSON.stringify(new URL('../../devenv/uninstrumented-env.ts', import.meta.url).href)};
  const { NODE_V8_COVERAGE: _dropped, ...without } = process.env;
  const env = ${withHelper ? 'uninstrumentedEnv(process.env)' : 'without'};
  const child = spawnSync(process.execPath, ['-p', 'process.env.NODE_V8_COVERAGE ?? "unset"'], { env });
  process.stdout.write(child.stdout);
`;

describe('uninstrumentedEnv', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'staticsite-coverage-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const childSees = (withHelper: boolean) =>
    spawnSync(process.execPath, ['--input-type=module', '-e', parentScript(withHelper)], {
      env: { ...process.env, NODE_V8_COVERAGE: dir },
      encoding: 'utf8',
    }).stdout.trim();

  it('an env without the key still gives the child the parent coverage (why the helper exists)', () => {
    expect(childSees(false)).to.equal(dir);
  });

  it('gives the child no coverage', () => {
    expect(childSees(true)).to.equal('unset');
  });
});
