/**
 * The image users run, built by `npm run image` (the Dockerfile on bases made here) and run with
 * `docker run`: its CLI, its user, what it holds, and its webhook serving a real API server from
 * a read-only root. Also the site image the controller's children run, made here the same way.
 */

import { readlinkSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildCrd, CRD_NAME } from '../../api/index.ts';
import type { ControlPlane } from '../../devenv/controlplane.ts';
import { eventually, installCrd, uninstallCrd } from '../../devenv/crds.ts';
import { observedStatus } from '../../devenv/observed.ts';
import { freePort } from '../../devenv/ports.ts';
import { MUTATING_CONFIGS, VALIDATING_CONFIGS, webhookConfigurations } from '../../devenv/webhook-configs.ts';
import { buildImages, docker, dockerOk, operatorImage, runCommand, SITE_IMAGE } from '../support/docker.ts';
import { testCluster } from '../support/shared.ts';

const root = new URL('../../', import.meta.url);
const packageJson = JSON.parse(await readFile(new URL('package.json', root), 'utf8')) as {
  version: string;
  devDependencies: Record<string, string>;
};
const buildFolders = (JSON.parse(await readFile(new URL('tsconfig.build.json', root), 'utf8')) as { include: string[] })
  .include;

/** Runs node inside the image (its only program) and returns what the script prints. */
async function nodeInImage(image: string, script: string): Promise<string> {
  return dockerOk(['run', '--rm', '--read-only', '--entrypoint', '/nodejs/bin/node', image, '-e', script]);
}

/** The uids of a running container's processes, as the host's ps sees them. */
async function processUids(container: string): Promise<string[]> {
  // docker top passes its options to ps and needs the pid column beside the one asked for.
  const table = await dockerOk(['top', container, '-o', 'pid,uid']);
  return table
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/)[1] ?? '');
}

describe('e2e: the image (npm run image, docker run)', function () {
  this.timeout(120_000);
  let image: string;

  before(async function () {
    this.timeout(45 * 60_000);
    image = await buildImages();
  });

  it('a second npm run image while Docker runs reuses everything in under 60 s; no Docker process holds a lock or pipe of the build', async () => {
    const started = Date.now();
    expect(await buildImages()).to.equal(image);
    expect(Date.now() - started).to.be.below(60_000);
    // dockerd and its containerd were started by the first build (on a fresh machine) or earlier:
    // either way neither may hold one of the build scripts' lock files.
    const daemons = (await runCommand('pgrep', ['-x', 'dockerd|containerd'])).stdout.split('\n').filter(Boolean);
    expect(daemons.length).to.be.greaterThan(0);
    for (const pid of daemons) {
      const held = (await readdir(`/proc/${pid}/fd`)).map((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`));
      expect(
        held.filter((target) => target.endsWith('.build.lock')),
        `process ${pid}`,
      ).to.deep.equal([]);
    }
  });

  it('is tagged staticsite-operator:<package.json version>', () => {
    expect(image).to.equal(`staticsite-operator:${packageJson.version}`);
    expect(operatorImage()).to.equal(image);
  });

  it('docker run IMAGE --version prints the version; --help and no arguments print the commands; a command --help its flags', async () => {
    const printed = await docker(['run', '--rm', image, '--version']);
    expect({ code: printed.code, stderr: printed.stderr }).to.deep.equal({ code: 0, stderr: '' });
    // The commit build.sh passes in (the build context has no .git): HEAD, `-dirty` with tracked changes.
    const version = packageJson.version.replaceAll('.', '\\.');
    expect(printed.stdout).to.match(new RegExp(`^staticsite ${version} \\(commit [0-9a-f]{40}(-dirty)?\\)\n$`));
    for (const args of [['--help'], []]) {
      const result = await docker(['run', '--rm', image, ...args]);
      expect(result.code, args.join(' ')).to.equal(0);
      expect(result.stdout).to.match(/^usage: staticsite <command> \[flags\]/);
      for (const command of ['certs', 'controller', 'validate', 'webhook']) {
        expect(result.stdout).to.match(new RegExp(`^ {2}${command} `, 'm'));
      }
    }
    const webhookHelp = await docker(['run', '--rm', image, 'webhook', '--help']);
    expect(webhookHelp.code).to.equal(0);
    expect(webhookHelp.stdout).to.match(/^usage: staticsite webhook --cert-dir DIR /);
  });

  it('runs as the nonroot user 65532 and has no shell', async () => {
    expect(await dockerOk(['image', 'inspect', '--format', '{{.Config.User}}', image])).to.equal('65532:65532');
    const shell = await docker(['run', '--rm', '--entrypoint', '/bin/sh', image, '-c', 'true']);
    expect(shell.code).to.equal(127);
    expect(shell.stderr).to.match(/\/bin\/sh: no such file or directory/);
    expect(await nodeInImage(image, 'console.log(process.getuid(), process.getgid())')).to.equal('65532 65532');
  });

  it('holds the build of the source folders and production dependencies only: no tests, no dev tools', async () => {
    const listing = JSON.parse(
      await nodeInImage(
        image,
        `const fs = require('fs');
         const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) =>
           e.isDirectory() ? [d + '/' + e.name + '/', ...walk(d + '/' + e.name)] : [d + '/' + e.name]);
         console.log(JSON.stringify({ app: fs.readdirSync('/app').sort(), dist: fs.readdirSync('/app/dist').sort(),
           files: walk('/app/dist'),
           packages: fs.readdirSync('/app/node_modules').flatMap((n) => n.startsWith('@')
             ? fs.readdirSync('/app/node_modules/' + n).map((m) => n + '/' + m) : [n])
             .filter((n) => fs.existsSync('/app/node_modules/' + n + '/package.json')) }));`,
      ),
    ) as { app: string[]; dist: string[]; files: string[]; packages: string[] };
    expect(listing.app).to.deep.equal(['dist', 'node_modules', 'package.json']);
    // The compiled folders, and bin/: the CLI bundle the entry point runs.
    expect(listing.dist).to.deep.equal([...buildFolders, 'bin'].sort());
    expect(listing.files.filter((f) => /\/(test|testing)\/|\.test\.|\/bench\//.test(f))).to.deep.equal([]);
    expect(listing.files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).to.deep.equal([]);
    // Every devDependency that no production dependency needs (npm's own answer) is absent.
    const production = JSON.stringify(
      JSON.parse((await runCommand('npm', ['ls', '--omit=dev', '--all', '--json'], { cwd: root.pathname })).stdout),
    );
    const devOnly = Object.keys(packageJson.devDependencies).filter((name) => !production.includes(`"${name}"`));
    expect(devOnly).to.include.members(['mocha', 'typescript', 'c8', 'node', '@biomejs/biome', 'esbuild']);
    expect(devOnly.filter((name) => listing.packages.includes(name))).to.deep.equal([]);
  });

  describe('its webhook, from a read-only root, behind the API server', () => {
    let cp: ControlPlane;
    let work: string;
    let container = '';
    let expectedDenial = '';
    const sites = '/apis/staticsite.dev/v1/namespaces/image-e2e/staticsites';
    const prodOneReplica = {
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name: 'shop' },
      spec: { content: '<h1>shop</h1>', tier: 'prod', replicas: 1 },
    };

    before(async function () {
      this.timeout(180_000);
      ({ controlPlane: cp } = await testCluster());
      await cp.ensureNamespace('image-e2e');
      // The API server's own verdict under the full CRD (schema and CEL rules, no webhook).
      await installCrd(cp.admin, buildCrd({ schemaOnly: true }));
      const dryRun = await cp.admin.post<{ code: number; message: string }>(sites, prodOneReplica, {
        query: { dryRun: 'All' },
      });
      expect(dryRun.body.code, JSON.stringify(dryRun.body)).to.equal(422);
      expectedDenial = `admission webhook "validate.staticsite.dev" denied the request: ${dryRun.body.message}`;
      await uninstallCrd(cp.admin, CRD_NAME);

      // Writable by the image's user: the certs the image's own `certs bootstrap` writes, and a
      // readable copy of the admin kubeconfig.
      work = await mkdtemp(join(tmpdir(), 'staticsite-image-e2e-'));
      const certDir = join(work, 'certs');
      await writeFile(join(work, 'kubeconfig'), await readFile(cp.kubeconfigPath, 'utf8'), { mode: 0o644 });
      await mkdir(certDir);
      await chmod(certDir, 0o777);
      await dockerOk([
        'run',
        '--rm',
        '--read-only',
        '-v',
        `${certDir}:/certs`,
        image,
        'certs',
        'bootstrap',
        '--service=staticsite-webhook',
        '--namespace=staticsite-system',
        '--san=127.0.0.1',
        '--out-dir=/certs',
      ]);
      const ca = await readFile(join(certDir, 'ca.crt'), 'utf8');

      // The webhook-only CRD (no CEL rules: the webhook enforces them), before the webhook starts:
      // it is ready once its StaticSite cache has synced.
      await installCrd(cp.admin, buildCrd({ schemaOnly: true, withoutCelRules: true }));
      const [port, metricsPort] = [await freePort(), await freePort()];
      container = await dockerOk([
        'run',
        '-d',
        '--read-only',
        '--network',
        'host',
        '-v',
        `${certDir}:/certs:ro`,
        '-v',
        `${join(work, 'kubeconfig')}:/kube/config:ro`,
        image,
        'webhook',
        '--cert-dir=/certs',
        `--port=${port}`,
        `--metrics-port=${metricsPort}`,
        '--host=127.0.0.1',
        '--kubeconfig=/kube/config',
      ]);
      await eventually(
        'the webhook container ready',
        async () => (await observedStatus(`https://127.0.0.1:${metricsPort}/readyz`)) === 200,
        60_000,
      );
      const { mutating, validating } = webhookConfigurations(
        `https://127.0.0.1:${port}`,
        Buffer.from(ca).toString('base64'),
        'staticsite-image',
      );
      await cp.admin.must('POST', MUTATING_CONFIGS, mutating);
      await cp.admin.must('POST', VALIDATING_CONFIGS, validating);
      await eventually('the webhooks active', async () => {
        const res = await cp.admin.post<{ metadata?: { finalizers?: string[] } }>(
          sites,
          { ...prodOneReplica, metadata: { name: 'probe' }, spec: { content: 'x' } },
          { query: { dryRun: 'All' } },
        );
        return res.body.metadata?.finalizers?.includes('staticsite.dev/external-record');
      });
    });

    after(async function () {
      this.timeout(150_000);
      if (container) await docker(['rm', '-f', container]);
      if (cp) {
        await cp.admin.delete(`${MUTATING_CONFIGS}/staticsite-image`);
        await cp.admin.delete(`${VALIDATING_CONFIGS}/staticsite-image`);
        await uninstallCrd(cp.admin, CRD_NAME);
      }
      if (work) await rm(work, { recursive: true, force: true });
    });

    it('denies what the API server denies, with its message, running as uid 65532', async () => {
      const res = await cp.admin.post<{ code: number; message: string }>(sites, prodOneReplica, {
        query: { dryRun: 'All' },
      });
      expect(res.body).to.deep.include({ code: 422, message: expectedDenial });
      expect(await processUids(container)).to.deep.equal(['65532']);
    });
  });
});

describe('e2e: the site image (staticsite-local/nginx-unprivileged)', function () {
  this.timeout(120_000);
  let content: string;
  let container = '';

  before(async function () {
    this.timeout(45 * 60_000);
    await buildImages();
    content = await mkdtemp(join(tmpdir(), 'staticsite-site-image-'));
    await chmod(content, 0o755);
    await writeFile(join(content, 'index.html'), '<h1>from a ConfigMap</h1>\n', { mode: 0o644 });
  });

  after(async () => {
    if (container) await docker(['rm', '-f', container]);
    await rm(content, { recursive: true, force: true });
  });

  it('serves the mounted content on 8080 as uid 101, with /tmp as the image has it (as a pod runs it)', async () => {
    container = await dockerOk([
      'run',
      '-d',
      '-v',
      `${content}:/usr/share/nginx/html:ro`,
      '-p',
      '127.0.0.1::8080',
      SITE_IMAGE,
    ]);
    const mapped = await dockerOk(['port', container, '8080/tcp']);
    const url = `http://${mapped.split('\n')[0]}/`;
    const body = await eventually(
      'nginx answering',
      async () => {
        const res = await fetch(url).catch(() => undefined);
        return res?.status === 200 ? res.text() : undefined;
      },
      30_000,
    );
    expect(body).to.equal('<h1>from a ConfigMap</h1>\n');
    expect(await dockerOk(['image', 'inspect', '--format', '{{.Config.User}}', SITE_IMAGE])).to.equal('101:101');
    const uids = await processUids(container);
    expect(uids.length).to.be.greaterThan(1);
    expect(new Set(uids)).to.deep.equal(new Set(['101']));
  });
});
