/**
 * The image and the compose stack, timed beside the same work without Docker:
 *   - `npm run image` warm (every input unchanged);
 *   - the operator image with no layer cache (`docker build --no-cache` on the local bases) beside
 *     its steps on the host (`npm ci` into an empty folder, `tsc -p tsconfig.build.json`);
 *   - `docker compose up -d` to a Ready sample site, then `down -v`, beside
 *     `staticsite local --exit-after-sample` (the same system as host processes);
 *   - with --cold first: the local bases from nothing (the Debian tar and every staticsite-local
 *     image removed), i.e. debootstrap, import and the two Node bases.
 * Rounds alternate the two sides. Run: npm run bench:image -- [rounds] [--cold]
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../cli/package-root.ts';

const root = packageRoot();
const image = `staticsite-operator:${(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version}`;
const args = process.argv.slice(2);
const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 3);
const cold = args.includes('--cold');
const cache = join(
  process.env.STATICSITE_CACHE_DIR ?? join(process.env.HOME ?? '/root', '.cache/staticsite-operator'),
  'images',
);
/** The one list of source folders. */
const sourceFolders = (JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as { include: string[] })
  .include;
const compose = ['compose', '-p', 'staticsite-bench', '-f', 'docker-compose.yml', '-f', 'docker-compose.local.yml'];

function sh(command: string, argv: string[], options: { cwd?: string; allowFail?: boolean } = {}): string {
  const result = spawnSync(command, argv, { cwd: options.cwd ?? root, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (result.status !== 0 && !options.allowFail) {
    throw new Error(`${command} ${argv.join(' ')}: exit ${result.status}\n${result.stderr}`);
  }
  return result.stdout;
}

function timed(run: () => void): number {
  const started = performance.now();
  run();
  return +((performance.now() - started) / 1000).toFixed(1);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const report: Record<string, unknown> = { cpus: cpus().length, loadBefore: loadavg().map((l) => +l.toFixed(2)) };

if (cold) {
  for (const file of readdirSync(cache).filter((f) => f.endsWith('.tar'))) rmSync(join(cache, file));
  const local = sh('docker', ['images', '--format', '{{.Repository}}:{{.Tag}}', 'staticsite-local/*']).trim();
  const operator = sh('docker', ['images', '-q', 'staticsite-operator']).trim();
  if (local) sh('docker', ['rmi', '-f', ...local.split('\n')]);
  if (operator) sh('docker', ['rmi', '-f', ...new Set(operator.split('\n'))], { allowFail: true });
  sh('docker', ['image', 'prune', '-f']);
  report.coldImageSeconds = timed(() => sh('bash', ['devenv/image/build.sh']));
}

report.warmImageSeconds = timed(() => sh('bash', ['devenv/image/build.sh']));
report.imageBytes = Number(sh('docker', ['image', 'inspect', '--format', '{{.Size}}', image]));

const noCache: number[] = [];
const host: number[] = [];
const composeReady: number[] = [];
const local: number[] = [];
const node = join(root, 'node_modules/.bin/node');
for (let round = 0; round < rounds; round++) {
  noCache.push(
    timed(() =>
      sh('docker', [
        'build',
        '--quiet',
        '--no-cache',
        '--network',
        'host',
        '--build-arg',
        'BUILD_BASE=staticsite-local/node:24',
        '--build-arg',
        'RUNTIME_BASE=staticsite-local/nodejs24-runtime:nonroot',
        '-t',
        'staticsite-operator:bench',
        '.',
      ]),
    ),
  );
  const work = mkdtempSync(join(tmpdir(), 'staticsite-bench-host-build-'));
  for (const entry of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
    cpSync(join(root, entry), join(work, entry));
  }
  for (const folder of sourceFolders) {
    cpSync(join(root, folder), join(work, folder), { recursive: true });
  }
  host.push(
    timed(() => {
      sh('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: work });
      sh(node, [join(work, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: work });
    }),
  );
  rmSync(work, { recursive: true, force: true });

  composeReady.push(
    timed(() => {
      sh('docker', [...compose, 'up', '-d']);
      for (;;) {
        const out = sh(
          'docker',
          [
            ...compose,
            'run',
            '--rm',
            'kubectl',
            'get',
            'staticsite',
            'hello',
            '-n',
            'demo',
            '-o',
            'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
          ],
          { allowFail: true },
        );
        if (out.trim() === 'True') break;
      }
    }),
  );
  sh('docker', [...compose, 'down', '-v']);
  local.push(timed(() => sh(node, ['dist/bin/staticsite.js', 'local', '--exit-after-sample'])));
}
sh('docker', ['rmi', 'staticsite-operator:bench'], { allowFail: true });

report.operatorNoCacheSeconds = noCache;
report.hostNpmCiTscSeconds = host;
report.noCacheOverHost = +(median(noCache) / median(host)).toFixed(2);
report.composeToReadySeconds = composeReady;
report.localToReadySeconds = local;
report.composeOverLocal = +(median(composeReady) / median(local)).toFixed(2);
report.loadAfter = loadavg().map((l) => +l.toFixed(2));
console.log(JSON.stringify(report, null, 2));
