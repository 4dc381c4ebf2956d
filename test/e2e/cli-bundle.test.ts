/**
 * The built CLI (dist/bin/staticsite.js, what `npx staticsite` and the image run) is one bundle
 * that loads each command's code only when that command runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { builtCli } from '../../devenv/webhook-process.ts';

/** Runs the built CLI and returns every module file the process loaded, relative to the package. */
function loadedModules(args: string[], dir: string): { status: number | null; files: string[] } {
  const hook = `
    import { registerHooks } from 'node:module';
    registerHooks({
      load(url, context, next) {
        if (url.startsWith('file:')) process.stderr.write('LOADED ' + url + '\\n');
        return next(url, context);
      },
    });`;
  const child = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(hook)}`, builtCli(), ...args],
    {
      cwd: dir,
      encoding: 'utf8',
    },
  );
  const root = builtCli().replace(/dist\/bin\/staticsite\.js$/, '');
  const files = child.stderr
    .split('\n')
    .filter((line) => line.startsWith('LOADED file://'))
    .map((line) => decodeURIComponent(line.slice('LOADED file://'.length)).replace(root, ''));
  return { status: child.status, files };
}

describe('e2e: the CLI bundle (node dist/bin/staticsite.js)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cli-bundle-'));
    await writeFile(
      join(dir, 'site.yaml'),
      'apiVersion: staticsite.dev/v1\nkind: StaticSite\nmetadata: {name: a, namespace: web}\nspec: {content: hi, replicas: 1}\n',
    );
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('validate loads its bundle files only: no module of another command or of a CommonJS dependency', () => {
    const { status, files } = loadedModules(['validate', 'site.yaml'], dir);
    expect(status).to.equal(0);
    expect(files.filter((f) => !f.startsWith('dist/bin/'))).to.deep.equal([]);
    expect(files).to.include('dist/bin/staticsite.js');
    expect(files.some((f) => /^dist\/bin\/validate-command-[A-Z0-9]+\.js$/.test(f))).to.equal(true);
    expect(files.filter((f) => /(webhook|controller|certs|compare|local)-command/.test(f))).to.deep.equal([]);
    // About 110 ES modules before bundling; each costs a resolution, a package.json lookup, a link.
    expect(files.length).to.be.below(20);
  });

  it('--version loads the entry and what it imports, nothing of any command', () => {
    const { status, files } = loadedModules(['--version'], dir);
    expect(status).to.equal(0);
    expect(files.filter((f) => /-command-/.test(f))).to.deep.equal([]);
  });

  it('webhook --help loads the webhook chunk, and neither @kubernetes/client-node nor Express', () => {
    const { status, files } = loadedModules(['webhook', '--help'], dir);
    expect(status).to.equal(0);
    expect(files.some((f) => /^dist\/bin\/webhook-command-[A-Z0-9]+\.js$/.test(f))).to.equal(true);
    // Express serves users' supertest suites (createWebhookApp); the process's listener does without it.
    expect(files.filter((f) => /node_modules\/(@kubernetes\/client-node|express)\//.test(f))).to.deep.equal([]);
  });
});
