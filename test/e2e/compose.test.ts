/**
 * `docker compose up -d` with the local images (docker-compose.yml + docker-compose.local.yml), as
 * the README tells a user with no registry: the sample site becomes Ready through the webhook and
 * controller containers, `docker compose logs` reads their logs, and `docker compose down -v`
 * leaves no container, volume or network behind.
 */
import { createConnection } from 'node:net';
import { expect } from 'chai';
import { eventually } from '../../devenv/crds.ts';
import { buildImages, docker, dockerOk, runCommand } from '../support/docker.ts';
import { registerCleanup } from '../support/run-guard.ts';

const root = new URL('../../', import.meta.url).pathname;
const PROJECT = 'staticsite-e2e';
const compose = ['compose', '-p', PROJECT, '-f', 'docker-compose.yml', '-f', 'docker-compose.local.yml'];
/** The host ports the stack listens on (every service uses the host network). */
const HOST_PORTS = [2379, 2380, 6443, 8053, 8080, 8081, 8082, 8443, 10257];

function composeRun(args: readonly string[], timeoutMs = 300_000) {
  return runCommand('docker', [...compose, ...args], { cwd: root, timeoutMs });
}

async function composeOk(args: readonly string[], timeoutMs?: number): Promise<string> {
  const result = await composeRun(args, timeoutMs);
  if (result.code !== 0) throw new Error(`docker compose ${args.join(' ')}: exit ${result.code}\n${result.stderr}`);
  return result.stdout;
}

function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** What is left of the project: containers, volumes and networks labelled with its name. */
async function leftovers(): Promise<string[]> {
  const filter = `label=com.docker.compose.project=${PROJECT}`;
  const lists = await Promise.all([
    dockerOk(['ps', '-a', '-q', '--filter', filter]),
    dockerOk(['volume', 'ls', '-q', '--filter', filter]),
    dockerOk(['network', 'ls', '-q', '--filter', filter]),
  ]);
  return lists.flatMap((list) => list.split('\n')).filter((line) => line !== '');
}

interface Site {
  metadata: { finalizers?: string[] };
  status?: { conditions?: Array<{ type: string; status: string }>; readyReplicas?: number };
}

describe('e2e: docker compose up -d (local images)', function () {
  this.timeout(300_000);
  let up = false;

  before(async function () {
    this.timeout(45 * 60_000);
    // However the run ends, the project goes down after it (compose finds it by its label).
    registerCleanup(['docker', 'compose', '-p', PROJECT, 'down', '-v', '--remove-orphans']);
    await buildImages();
    await composeRun(['down', '-v', '--remove-orphans']);
    const busy = [];
    for (const port of HOST_PORTS) if (await portInUse(port)) busy.push(port);
    expect(busy, 'host ports the compose stack needs are in use').to.deep.equal([]);
  });

  after(async function () {
    this.timeout(120_000);
    if (up) await composeRun(['down', '-v', '--remove-orphans']);
  });

  it('brings the sample site to Ready through the webhook and controller containers', async () => {
    up = true;
    await composeOk(['up', '-d'], 600_000);
    const site = await eventually(
      'the sample site Ready',
      async () => {
        const result = await composeRun([
          'run',
          '--rm',
          'kubectl',
          'get',
          'staticsite',
          'hello',
          '-n',
          'demo',
          '-o',
          'json',
        ]);
        if (result.code !== 0) return undefined;
        const object = JSON.parse(result.stdout) as Site;
        return object.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? object : undefined;
      },
      240_000,
    );
    // The mutating webhook added the finalizer; the controller made the children and reported them.
    expect(site.metadata.finalizers).to.include('staticsite.dev/external-record');
    expect(site.status?.readyReplicas).to.equal(2);
    const deployment = JSON.parse(
      await composeOk(['run', '--rm', 'kubectl', 'get', 'deployment', 'hello', '-n', 'demo', '-o', 'json']),
    ) as { metadata: { ownerReferences?: Array<{ kind: string; name: string; controller?: boolean }> } };
    expect(deployment.metadata.ownerReferences).to.deep.include.members([
      { ...deployment.metadata.ownerReferences?.[0], kind: 'StaticSite', name: 'hello', controller: true },
    ]);
  });

  it("the sample's record answers dig from the host, from the compose DNS server", async () => {
    const answer = await eventually(
      'dig answers hello.demo.sites.staticsite.dev',
      async () => {
        const result = await runCommand(
          'dig',
          ['@127.0.0.1', '-p', '8053', '+short', 'hello.demo.sites.staticsite.dev', 'CNAME'],
          {
            cwd: root,
            timeoutMs: 10_000,
          },
        );
        return result.code === 0 && result.stdout.trim() !== '' ? result.stdout.trim() : undefined;
      },
      60_000,
    );
    expect(answer).to.equal('hello.demo.svc.cluster.local.');
  });

  it('docker compose logs shows the JSON logs of the webhook and the controller', async () => {
    for (const service of ['webhook', 'controller']) {
      const logs = await composeOk(['logs', '--no-color', '--no-log-prefix', service]);
      const lines = logs
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { level?: unknown; msg?: unknown });
      expect(lines.length, `${service} log lines`).to.be.greaterThan(0);
      for (const line of lines) expect(line).to.include.keys('level', 'msg');
    }
  });

  it('docker compose down -v leaves no container, volume or network of the project', async () => {
    await composeOk(['down', '-v', '--remove-orphans'], 120_000);
    up = false;
    expect(await leftovers()).to.deep.equal([]);
    expect((await docker(['volume', 'inspect', `${PROJECT}_pki`])).code).to.equal(1);
  });
});
