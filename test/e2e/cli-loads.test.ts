/**
 * The production commands of the built CLI (dist/bin/staticsite.js: what the image, the manifests and
 * `npx staticsite` run) load no module of the development environment (devenv/). The dev commands
 * `local` and `compare` load it only when they run (an import() inside their run), not for `--help`.
 *
 * Two views of the same bundle (`npm run build` first):
 * - at run time: each command runs under a preload (test/support/record-loads.ts) that writes the URL
 *   of every module the process loads, worker threads included. The bundle inlines the sources into
 *   chunks, so a loaded chunk is read back as the source files it holds, from its source map
 *   (`sources`); a devenv/ file loaded as a file of its own (dist/devenv/) counts as well.
 * - statically: every chunk the entry, the review worker and the production commands can load, by a
 *   static import or an import(), holds no devenv/ source. That covers the paths a short run does not
 *   take (a controller with a cluster, records in DNS).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { packageRoot } from '../../cli/package-root.ts';
import { builtCli } from '../../devenv/webhook-process.ts';

const root = packageRoot();
const RECORDER = new URL('../support/record-loads.ts', import.meta.url).href;
/** Every command but the dev commands: what the image runs, and what users run from npm. */
const PRODUCTION = ['webhook', 'controller', 'certs', 'validate', 'cel', 'crd', 'generate', 'migrate-storage'];
const DEV = ['local', 'compare'];

interface RecordedRun {
  code: number | null;
  output: string;
  /** The module files the process loaded, relative to the package (dist/bin/chunk-….js, node_modules/…). */
  modules: string[];
}

let runs = 0;

/**
 * Runs the built CLI with the recorder and returns what it loaded. With `stopWhen`, the process is sent
 * SIGTERM once its output matches (a server that would otherwise run on).
 */
function runRecorded(args: string[], cwd: string, stopWhen?: RegExp): Promise<RecordedRun> {
  const record = join(cwd, `loads-${++runs}.txt`);
  const child: ChildProcess = spawn(process.execPath, ['--import', RECORDER, builtCli(), ...args], {
    cwd,
    env: { ...process.env, STATICSITE_RECORD_LOADS: record },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stopped = false;
  const onData = (data: Buffer) => {
    output += data.toString('utf8');
    if (stopWhen && !stopped && stopWhen.test(output)) {
      stopped = true;
      child.kill('SIGTERM');
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((done) =>
    child.on('close', (code, signal) => {
      if (signal) output += `\n(ended by ${signal})`;
      clearTimeout(deadline);
      const urls = existsSync(record) ? readFileSync(record, 'utf8').split('\n') : [];
      const files = urls.filter((url) => url.startsWith('file:')).map((url) => relative(root, fileURLToPath(url)));
      done({ code, output, modules: [...new Set(files)].sort() });
    }),
  );
}

const bin = () => dirname(builtCli());

/** The source files a file of the bundle holds (its source map's `sources`), relative to the package. */
function sourcesOf(chunk: string): string[] {
  const map = join(root, `${chunk}.map`);
  if (!existsSync(map)) return [];
  const { sources } = JSON.parse(readFileSync(map, 'utf8')) as { sources: string[] };
  return sources.map((source) => relative(root, resolve(dirname(map), source)));
}

const isDevenv = (file: string) => file.startsWith('devenv/') || file.startsWith('dist/devenv/');

/** The devenv/ modules among loaded files: a devenv file itself, or a bundle chunk holding one (`chunk (source)`). */
function devenvIn(modules: readonly string[]): string[] {
  return modules.flatMap((file) => [
    ...(isDevenv(file) ? [file] : []),
    ...(file.startsWith('dist/bin/') ? sourcesOf(file).filter(isDevenv) : []).map((source) => `${file} (${source})`),
  ]);
}

const loadedChunk = (run: RecordedRun, name: string) =>
  run.modules.some((file) => new RegExp(`^dist/bin/${name}-[A-Z0-9]+\\.js$`).test(file));

describe('e2e: the built CLI loads devenv/ only for the dev commands (node dist/bin/staticsite.js)', () => {
  let dir: string;
  let certs: RecordedRun;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cli-loads-'));
    // The webhook below serves with these: the bootstrap is itself one of the recorded runs.
    certs = await runRecorded(
      ['certs', 'bootstrap', '--service', 'webhook', '--namespace', 'web', '--out-dir', join(dir, 'certs')],
      dir,
    );
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  describe('the production commands, as they run', () => {
    for (const command of PRODUCTION) {
      it(`${command} --help loads its command's chunk and no devenv/ module`, async () => {
        const run = await runRecorded([command, '--help'], dir);
        expect(run.code, run.output).to.equal(0);
        expect(loadedChunk(run, `${command}-command`), run.modules.join('\n')).to.equal(true);
        expect(devenvIn(run.modules)).to.deep.equal([]);
      });
    }

    it('certs bootstrap issues a CA and a serving certificate into a directory, loading no devenv/ module', () => {
      expect(certs.code, certs.output).to.equal(0);
      expect(existsSync(join(dir, 'certs', 'tls.crt'))).to.equal(true);
      expect(loadedChunk(certs, 'certs-command')).to.equal(true);
      expect(devenvIn(certs.modules)).to.deep.equal([]);
    });

    it('validate admits the sample site against CRDs it remembers by build id, loading no devenv/ module', async () => {
      const args = ['validate', '--ignore-missing-schemas', '--crd', join(root, 'manifests/crds/full')];
      const run = await runRecorded(
        [...args, '--cache-dir', join(dir, 'cache'), join(root, 'manifests/samples/hello.yaml')],
        dir,
      );
      expect(run.code, run.output).to.equal(0);
      expect(run.output).to.include('StaticSite/hello: valid');
      // The build id named the cache entries: the reader of the build id (cli/validate/) ran.
      expect(existsSync(join(dir, 'cache', 'accepted'))).to.equal(true);
      expect(devenvIn(run.modules)).to.deep.equal([]);
    });

    it('cel evaluates an expression, loading no devenv/ module', async () => {
      const run = await runRecorded(['cel', '--self', '1', 'self + 1'], dir);
      expect(run.code, run.output).to.equal(0);
      expect(run.output).to.include('{"value":2}');
      expect(devenvIn(run.modules)).to.deep.equal([]);
    });

    it('crd prints the CRD and generate writes the manifests, loading no devenv/ module', async () => {
      const crd = await runRecorded(['crd'], dir);
      expect(crd.code, crd.output).to.equal(0);
      expect(crd.output).to.include('kind: CustomResourceDefinition');
      const generate = await runRecorded(['generate', 'manifests', '--dir', join(dir, 'manifests')], dir);
      expect(generate.code, generate.output).to.equal(0);
      expect(readdirSync(join(dir, 'manifests')).length).to.be.above(0);
      expect(devenvIn([...crd.modules, ...generate.modules])).to.deep.equal([]);
    });

    it('webhook serves until SIGTERM, its review worker threads included, loading no devenv/ module', async () => {
      const run = await runRecorded(
        [
          'webhook',
          `--cert-dir=${join(dir, 'certs')}`,
          '--port=0',
          '--metrics-port=0',
          '--host=127.0.0.1',
          '--shutdown-delay=0s',
        ],
        dir,
        /"msg":"webhook serving"/,
      );
      // The command's signal handlers are in place before it serves: the SIGTERM sent on "webhook
      // serving" drains it and it exits 0, never killed by the signal.
      expect(run.output).to.match(/"msg":"webhook serving"/);
      expect(run.output).to.match(/"msg":"webhook stopped"/);
      expect(run.code, run.output).to.equal(0);
      // The recorder runs in the worker threads too: the worker's entry is among the loaded files.
      expect(run.modules).to.include('dist/bin/review-worker.js');
      expect(devenvIn(run.modules)).to.deep.equal([]);
    });

    it('controller runs its start-up checks against an API server that drops every connection, loading no devenv/ module', async () => {
      const server: Server = createServer((socket) => socket.destroy());
      await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
      try {
        const { port } = server.address() as { port: number };
        const kubeconfig = join(dir, 'kubeconfig');
        await writeFile(
          kubeconfig,
          [
            'apiVersion: v1',
            'kind: Config',
            'clusters: [{name: c, cluster: {server: "http://127.0.0.1:PORT"}}]'.replace('PORT', String(port)),
            'users: [{name: u, user: {token: t}}]',
            'contexts: [{name: c, context: {cluster: c, user: u}}]',
            'current-context: c',
            '',
          ].join('\n'),
        );
        await mkdir(join(dir, 'records'), { recursive: true });
        const run = await runRecorded(
          ['controller', '--kubeconfig', kubeconfig, '--metrics-port', '0', '--records-dir', join(dir, 'records')],
          dir,
          /start-up checks/,
        );
        expect(run.output).to.match(/start-up checks/);
        expect(loadedChunk(run, 'controller-command')).to.equal(true);
        expect(devenvIn(run.modules)).to.deep.equal([]);
      } finally {
        server.close();
      }
    });
  });

  describe('the dev commands', () => {
    it('local --help and compare --help load no devenv/ module: it loads when the command runs', async () => {
      for (const command of DEV) {
        const run = await runRecorded([command, '--help'], dir);
        expect(run.code, run.output).to.equal(0);
        expect(loadedChunk(run, `${command}-command`)).to.equal(true);
        expect(devenvIn(run.modules), command).to.deep.equal([]);
      }
    });

    it('local dns-config loads devenv/ when it runs: what the checks above look for, the recording sees', async () => {
      await mkdir(join(dir, 'dns'));
      const run = await runRecorded(['local', 'dns-config', '--dir', join(dir, 'dns')], dir);
      expect(run.code, run.output).to.equal(0);
      expect(devenvIn(run.modules).some((m) => m.endsWith('(devenv/local-commands.ts)'))).to.equal(true);
    });
  });

  describe('the bundle, statically (its chunks and their source maps)', () => {
    /** The relative imports of a chunk: `import … from "./x.js"`, `import "./x.js"` and `import("./x.js")`. */
    function importsOf(chunk: string): Array<{ target: string; dynamic: boolean }> {
      const text = readFileSync(join(root, chunk), 'utf8');
      return [...text.matchAll(/\b(from|import)\s*(\(\s*)?"\.\/([^"]+\.js)"/g)].map((m) => ({
        target: `dist/bin/${m[3]}`,
        dynamic: m[2] !== undefined,
      }));
    }

    /** Every chunk reachable from `starts`; `follow` decides which imports count. */
    function reachable(starts: string[], follow: (edge: { target: string; dynamic: boolean }) => boolean): string[] {
      const seen = new Set(starts);
      const queue = [...starts];
      for (let chunk = queue.shift(); chunk !== undefined; chunk = queue.shift()) {
        for (const edge of importsOf(chunk)) {
          if (follow(edge) && !seen.has(edge.target)) {
            seen.add(edge.target);
            queue.push(edge.target);
          }
        }
      }
      return [...seen].sort();
    }

    const devCommandChunk = (file: string) => new RegExp(`^dist/bin/(${DEV.join('|')})-command-`).test(file);
    const chunkOf = (command: string) => {
      const file = readdirSync(bin()).find((f) => new RegExp(`^${command}-command-[A-Z0-9]+\\.js$`).test(f));
      expect(file, `${command}'s chunk in dist/bin`).to.be.a('string');
      return `dist/bin/${file}`;
    };

    it('no chunk that the entry, the review worker or a production command can load holds a devenv/ source', () => {
      const production = reachable(
        ['dist/bin/staticsite.js', 'dist/bin/review-worker.js'],
        (edge) => !devCommandChunk(edge.target),
      );
      for (const command of PRODUCTION) expect(production).to.include(chunkOf(command));
      expect(
        production.flatMap((chunk) =>
          sourcesOf(chunk)
            .filter(isDevenv)
            .map((s) => `${chunk} (${s})`),
        ),
      ).to.deep.equal([]);
    });

    it('the dev commands reach devenv/ only through import(): their chunks and static imports hold none', () => {
      for (const [command, source] of [
        ['local', 'devenv/local-commands.ts'],
        ['compare', 'devenv/compare/run.ts'],
      ] as const) {
        const statically = reachable([chunkOf(command)], (edge) => !edge.dynamic);
        expect(
          statically.flatMap((chunk) => sourcesOf(chunk).filter(isDevenv)),
          command,
        ).to.deep.equal([]);
        const lazily = reachable([chunkOf(command)], () => true);
        expect(
          lazily.flatMap((chunk) => sourcesOf(chunk)),
          command,
        ).to.include(source);
      }
    });
  });
});
