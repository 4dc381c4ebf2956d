/**
 * `npm run local -- --gateway` as a user runs it (`node cli/main.ts local --gateway`, a process, until
 * Ctrl-C): the curl it prints returns the sample's page by its hostname through Traefik, an edit of
 * the content is served through it, and a deleted site's hostname gets Traefik's 404.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { loadAll } from 'js-yaml';
import { packageFile } from '../../cli/package-root.ts';
import { eventually } from '../../devenv/crds.ts';
import { KubeHttp } from '../../devenv/kube-http.ts';
import { readKubeconfig } from '../../devenv/kubeconfig.ts';

const run = promisify(execFile);
const SITE = '/apis/staticsite.dev/v1/namespaces/demo/staticsites/hello';

interface Site {
  metadata: { generation: number };
  spec: { content: string; hostname: string };
  status?: { observedGeneration?: number; url?: string; conditions?: Array<{ type: string; status: string }> };
}

/** The sample's content as manifests/samples/hello.yaml writes it. */
async function sampleContent(): Promise<string> {
  const documents = loadAll(await readFile(packageFile('manifests', 'samples', 'hello.yaml'), 'utf8'));
  const site = (documents as Array<{ kind?: string; spec?: { content: string } }>).find((o) => o.kind === 'StaticSite');
  return site?.spec?.content ?? '';
}

describe('e2e: `npm run local -- --gateway` serves the sample by its hostname through Traefik', function () {
  this.timeout(120_000);
  let local: ChildProcess;
  let output = '';
  let admin: KubeHttp;
  /** The printed `curl --resolve HOST:PORT:127.0.0.1 http://HOST:PORT/`, as arguments. */
  let curl: string[] = [];

  /** Runs the printed curl; returns the status and the body. */
  const get = async () => {
    const { stdout } = await run('curl', [
      ...curl.slice(1),
      '--silent',
      '--show-error',
      '--write-out',
      '\n%{http_code}',
    ]);
    const end = stdout.lastIndexOf('\n');
    return { status: Number(stdout.slice(end + 1)), body: stdout.slice(0, end) };
  };

  before(async function () {
    this.timeout(600_000);
    local = spawn(process.execPath, [packageFile('cli', 'main.ts'), 'local', '--gateway'], {
      cwd: packageFile(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    local.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    local.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = once(local, 'exit').then(() => {
      throw new Error(`local exited before it was running:\n${output}`);
    });
    const running = eventually('local running', async () => output.includes('Ctrl-C stops every process'), 540_000);
    await Promise.race([running, exited]);
    const kubeconfig = /export KUBECONFIG=(\S+)/.exec(output)?.[1] ?? '';
    admin = new KubeHttp(await readKubeconfig(kubeconfig));
    curl = /^ {2}(curl --resolve \S+ \S+)$/m.exec(output)?.[1]?.split(' ') ?? [];
  });

  after(async function () {
    this.timeout(120_000);
    admin?.close();
    if (!local || local.exitCode !== null) return;
    const exit = once(local, 'exit');
    local.kill('SIGINT');
    const [code] = await exit;
    expect(code, output).to.equal(0);
  });

  it('the sample is Ready with its URL, and the printed curl returns the HTML of its spec', async () => {
    const site = (await admin.get<Site>(SITE)).body;
    expect(site.status?.conditions?.find((c) => c.type === 'Ready')?.status).to.equal('True');
    expect(site.status?.url).to.equal(`http://${site.spec.hostname}/`);
    expect(curl.join(' ')).to.equal(
      `curl --resolve ${site.spec.hostname}:8000:127.0.0.1 http://${site.spec.hostname}:8000/`,
    );
    const { stdout } = await run('curl', curl.slice(1));
    expect(stdout).to.equal(await sampleContent());
  });

  it('an edit of the content is served through the gateway', async () => {
    const edited = `<h1>edited ${Date.now()}</h1>`;
    const patched = await admin.patch(
      SITE,
      { spec: { content: edited } },
      { contentType: 'application/merge-patch+json' },
    );
    expect(patched.status, patched.text).to.equal(200);
    let last = { status: 0, body: '' };
    await eventually(
      'the edited content served',
      async () => {
        last = await get();
        return last.status === 200 && last.body === edited;
      },
      60_000,
      250,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; last answer: ${last.status} ${last.body}`);
    });
  });

  it('deleting the site: its hostname gets Traefik 404', async () => {
    const deleted = await admin.delete(SITE);
    expect([200, 202]).to.include(deleted.status);
    await eventually('the site gone', async () => (await admin.get(SITE)).status === 404, 60_000, 250);
    // Traefik's own answer for a hostname no route takes, not a 404 of the site's pods.
    let last = { status: 0, body: '' };
    await eventually(
      "Traefik's 404 for the hostname",
      async () => {
        last = await get();
        return last.status === 404 && last.body === '404 page not found\n';
      },
      60_000,
      250,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; last answer: ${last.status} ${last.body}`);
    });
  });
});
