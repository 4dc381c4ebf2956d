import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { expect } from 'chai';

// The layout in README.md ("Layout"), checked on every tracked source file.
const root = new URL('../../', import.meta.url).pathname;
const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts'], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => f !== '' && !f.startsWith('node_modules/') && !f.startsWith('dist/') && existsSync(join(root, f)));
const NOT_SOURCE = new Set(['test', 'bench']);
const sources = tracked.filter((f) => !NOT_SOURCE.has(f.split('/')[0] ?? ''));
const topOf = (file: string) => file.split('/')[0] ?? '';
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** Each relative import of a file, and whether it is a dynamic `import()` (loaded when the call runs). */
function importEdgesOf(file: string): Array<{ target: string; dynamic: boolean }> {
  const text = readFileSync(join(root, file), 'utf8');
  const out: Array<{ target: string; dynamic: boolean }> = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2];
    if (spec) out.push({ target: normalize(join(dirname(file), spec)), dynamic: m[1] === undefined });
  }
  return out;
}

function importsOf(file: string): string[] {
  return importEdgesOf(file).map((edge) => edge.target);
}

/** What cli/ may import: every shipped folder but devenv/. */
const BELOW_CLI = [
  'api',
  'crd',
  'kube',
  'clock',
  'observability',
  'sharding',
  'process',
  'webhook',
  'controller',
  'certs',
  'migration',
];

/**
 * Which top-level folders each folder may import (besides itself). The development environment
 * (devenv/) sits on top: it may import the shipped code, cli/ included. cli/ reaches devenv/ only
 * through DEV_COMMANDS below.
 */
const ALLOWED: Record<string, readonly string[]> = {
  clock: [],
  process: [],
  kube: ['clock'],
  observability: ['clock', 'kube'],
  sharding: ['clock', 'kube'],
  crd: ['kube'],
  api: ['crd', 'kube'],
  webhook: ['api', 'crd', 'kube', 'clock', 'observability', 'sharding'],
  controller: ['api', 'crd', 'kube', 'clock', 'observability', 'sharding'],
  certs: ['api', 'kube', 'clock', 'observability'],
  migration: ['kube', 'clock'],
  devenv: [...BELOW_CLI, 'cli'],
  cli: BELOW_CLI,
};

/**
 * The dev commands: the only cli/ files that may import devenv/, and only by a dynamic `import()`,
 * so that the production commands (webhook, controller, certs, validate, cel, crd, generate) never
 * load a module of the development environment (test/e2e/cli-loads.test.ts checks the built CLI).
 */
const DEV_COMMANDS: readonly string[] = ['cli/local-command.ts', 'cli/compare-command.ts'];

describe('layout: dependencies point one way', () => {
  it('every folder with sources is built (tsconfig.build.json) and has a place in the dependency rules', () => {
    const build = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    const folders = [...new Set(sources.map(topOf))].filter((f) => f.indexOf('.') < 0).sort();
    expect(folders).to.deep.equal([...build.include].sort());
    expect(Object.keys(ALLOWED).sort()).to.deep.equal(folders);
  });

  it('no source file imports test/ or bench/, and each folder imports only the folders below it', () => {
    const wrong: string[] = [];
    for (const file of sources) {
      const from = topOf(file);
      for (const { target, dynamic } of importEdgesOf(file)) {
        const to = topOf(target);
        const devCommandLoad = from === 'cli' && to === 'devenv' && dynamic && DEV_COMMANDS.includes(file);
        if (to !== from && !(ALLOWED[from] ?? []).includes(to) && !devCommandLoad) wrong.push(`${file} -> ${target}`);
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it('cli/ loads devenv/ only from the dev commands (local, compare), and only by a dynamic import()', () => {
    const edges = sources
      .filter((file) => topOf(file) === 'cli')
      .flatMap((file) => importEdgesOf(file).map((edge) => ({ file, ...edge })))
      .filter((edge) => topOf(edge.target) === 'devenv');
    const wrong = edges
      .filter((edge) => !edge.dynamic || !DEV_COMMANDS.includes(edge.file))
      .map((edge) => `${edge.file} -> ${edge.target}${edge.dynamic ? ' (import())' : ' (static)'}`);
    expect(wrong).to.deep.equal([]);
    // The rule has something to hold: both dev commands load the development environment this way.
    expect([...new Set(edges.map((edge) => edge.file))].sort()).to.deep.equal([...DEV_COMMANDS].sort());
  });

  it('the test doubles live under test/support/, not in a shipped folder (no */testing/ or */testing.ts)', () => {
    expect(sources.filter((file) => /(^|\/)testing(\/|\.ts$)/.test(file))).to.deep.equal([]);
  });

  it('no import cycle among the source modules, type-only imports included', () => {
    const graph = new Map(sources.map((f) => [f, importsOf(f).filter((t) => t.endsWith('.ts'))]));
    const state = new Map<string, 'visiting' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'visiting');
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(cycles).to.deep.equal([]);
  });

  it('LICENSE holds the license package.json names (Apache-2.0)', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { license: string };
    expect(manifest.license).to.equal('Apache-2.0');
    const license = readFileSync(join(root, 'LICENSE'), 'utf8');
    expect(license).to.match(/^\s*Apache License\s+Version 2\.0, January 2004\s+http:\/\/www\.apache\.org\/licenses\//);
    expect(license).to.include('END OF TERMS AND CONDITIONS');
  });

  it('the image copies the sources as a whole, without tests (Dockerfile and .dockerignore)', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
    expect(dockerfile).to.match(/^COPY \. \.$/m);
    // The build the image runs is the project's own: tsc, then the CLI bundle.
    expect(dockerfile).to.match(/^RUN npm run build /m);
    expect(ignored).to.include.members(['test', 'bench', 'node_modules', 'dist']);
  });
});
