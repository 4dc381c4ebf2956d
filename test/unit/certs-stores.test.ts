import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pino from 'pino';
import { bootstrap } from '../../certs/bootstrap.ts';
import { defaultConfig } from '../../certs/config.ts';
import { DirectoryStore, nodeFileSystem, type StoreFileSystem } from '../../certs/dir-store.ts';
import { CertsError } from '../../certs/errors.ts';
import { SecretStore } from '../../certs/secret-store.ts';
import { generateRsaKeyPem } from '../../certs/x509.ts';
import { KubeApi } from '../../kube/api-client.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { FakeApiServer, ManualClock, type RecordedRequest } from '../support/kube/index.ts';

const quiet = pino({ level: 'silent' });
const fastKey = () => generateRsaKeyPem(1024);
const config = defaultConfig('staticsite-webhook', 'staticsite-system');
const SECRETS = '/api/v1/namespaces/staticsite-system/secrets';

type Secret = KubeObject & { type?: string; data: Record<string, string> };

const on = (method: string, path: string) => (r: RecordedRequest) => r.method === method && r.path === path;

async function expectCertsError(promise: Promise<unknown>): Promise<CertsError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(CertsError);
    return error as CertsError;
  }
  throw new Error('expected a CertsError');
}

describe('certs: directory store (--out-dir)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certs-dir-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('writes tls.crt, tls.key, ca.crt, ca.key; keys mode 0600, certificates 0644', async () => {
    const out = join(dir, 'out');
    await bootstrap(config, {
      store: new DirectoryStore(out),
      clock: new ManualClock(new Date()),
      logger: quiet,
      generateKey: fastKey,
    });
    const mode = async (f: string) => (await stat(join(out, f))).mode & 0o777;
    expect(await mode('tls.key')).to.equal(0o600);
    expect(await mode('ca.key')).to.equal(0o600);
    expect(await mode('tls.crt')).to.equal(0o644);
    expect(await mode('ca.crt')).to.equal(0o644);
    expect((await stat(out)).mode & 0o777).to.equal(0o700);
  });

  it('a second run rewrites no file (same content and modification time)', async () => {
    const deps = {
      store: new DirectoryStore(dir),
      clock: new ManualClock(new Date()),
      logger: quiet,
      generateKey: fastKey,
    };
    await bootstrap(config, deps);
    const files = ['tls.crt', 'tls.key', 'ca.crt', 'ca.key'];
    const before = await Promise.all(
      files.map(async (f) => [await readFile(join(dir, f), 'utf8'), (await stat(join(dir, f))).mtimeMs]),
    );
    const second = await bootstrap(config, { ...deps, store: new DirectoryStore(dir) });
    expect(second.changed).to.equal(false);
    const after = await Promise.all(
      files.map(async (f) => [await readFile(join(dir, f), 'utf8'), (await stat(join(dir, f))).mtimeMs]),
    );
    expect(after).to.deep.equal(before);
  });

  it('a corrupt file is named in the error with how to start over', async () => {
    const deps = {
      store: new DirectoryStore(dir),
      clock: new ManualClock(new Date()),
      logger: quiet,
      generateKey: fastKey,
    };
    await bootstrap(config, deps);
    await writeFile(join(dir, 'tls.crt'), 'garbage');
    const error = await expectCertsError(bootstrap(config, deps));
    expect(error.code).to.equal('CorruptPem');
    expect(error.message).to.equal(
      `file ${join(dir, 'tls.crt')} is not a PEM certificate bundle (no "-----BEGIN CERTIFICATE-----" block). ` +
        `Remove ${join(dir, 'tls.crt')} and ${join(dir, 'tls.key')} (or the whole directory) and run bootstrap again to issue new ones.`,
    );
  });

  it('a write failure names the file and says what to do', async () => {
    const denied: StoreFileSystem = {
      ...nodeFileSystem,
      writeFile: async () => {
        throw Object.assign(new Error("EACCES: permission denied, open '/x'"), { code: 'EACCES' });
      },
    };
    const error = await expectCertsError(
      bootstrap(config, {
        store: new DirectoryStore(dir, denied),
        clock: new ManualClock(new Date()),
        logger: quiet,
        generateKey: fastKey,
      }),
    );
    expect(error.code).to.equal('FileSystem');
    expect(error.message).to.equal(
      `cannot write ${join(dir, 'ca.key')}: EACCES: permission denied, open '/x'. The bootstrapper needs read and write access to the directory: fix its owner or mode, or choose another --out-dir.`,
    );
  });
});

describe('certs: Secret store', () => {
  function setup() {
    const server = new FakeApiServer();
    const api = new KubeApi(server);
    const store = new SecretStore(api, 'staticsite-system', 'webhook-tls');
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    return {
      server,
      api,
      store,
      clock,
      run: () => bootstrap(config, { store, clock, logger: quiet, generateKey: fastKey }),
    };
  }

  it('creates a kubernetes.io/tls serving Secret and an Opaque CA Secret (the webhook never mounts the CA key)', async () => {
    const { server, run } = setup();
    await run();
    const serving = server.read<Secret>(SECRETS, 'webhook-tls');
    const ca = server.read<Secret>(SECRETS, 'webhook-tls-ca');
    expect(serving?.type).to.equal('kubernetes.io/tls');
    expect(Object.keys(serving?.data ?? {}).sort()).to.deep.equal(['ca.crt', 'tls.crt', 'tls.key']);
    expect(serving?.metadata.labels).to.deep.equal({ 'app.kubernetes.io/managed-by': 'staticsite-certs' });
    expect(ca?.type).to.equal('Opaque');
    expect(Object.keys(ca?.data ?? {}).sort()).to.deep.equal(['ca.crt', 'ca.key']);
    expect(serving?.data['ca.crt']).to.equal(ca?.data['ca.crt']);
  });

  it('a second run only reads; a renewal merge-patches data with the resourceVersion it read, keeping other fields', async () => {
    const { server, api, run, clock } = setup();
    await run();
    const path = `${SECRETS}/webhook-tls`;
    server.modify<Secret>(SECRETS, 'webhook-tls', (live) => {
      live.metadata.annotations = { keep: 'me' };
      live.data.extra = 'eA==';
    });
    server.requests.length = 0;
    const second = await bootstrap(config, {
      store: new SecretStore(api, 'staticsite-system', 'webhook-tls'),
      clock,
      logger: quiet,
      generateKey: fastKey,
    });
    expect(second.changed).to.equal(false);
    expect(server.writes()).to.deep.equal([]);
    clock.set('2026-05-15T00:00:00Z'); // past the serving threshold (about 2026-04-30)
    const rv = server.read(SECRETS, 'webhook-tls')?.metadata.resourceVersion;
    await bootstrap(config, {
      store: new SecretStore(api, 'staticsite-system', 'webhook-tls'),
      clock,
      logger: quiet,
      generateKey: fastKey,
    });
    const writes = server.writes();
    expect(writes.map((w) => [w.method, w.path, w.contentType])).to.deep.equal([
      ['PATCH', path, 'application/merge-patch+json'],
    ]);
    const body = writes[0]?.body as { metadata: unknown; data: object };
    expect(body.metadata).to.deep.equal({ resourceVersion: rv });
    expect(Object.keys(body.data).sort()).to.deep.equal(['tls.crt', 'tls.key']);
    const after = server.read<Secret>(SECRETS, 'webhook-tls');
    expect(after?.metadata.annotations).to.deep.equal({ keep: 'me' });
    expect(after?.data.extra).to.equal('eA==');
  });

  it('fills in a serving Secret created ahead of time with empty tls.crt and tls.key', async () => {
    const { server, run } = setup();
    server.seed(SECRETS, {
      metadata: { name: 'webhook-tls', labels: { from: 'kustomize' } },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': '', 'tls.key': '' },
    });
    const result = await run();
    expect(result.actions).to.include('serving-stored');
    const secret = server.read<Secret>(SECRETS, 'webhook-tls');
    expect(Buffer.from(secret?.data['tls.crt'] ?? '', 'base64').toString()).to.equal(result.serving.pem);
    expect(secret?.metadata.labels).to.deep.equal({ from: 'kustomize' });
  });

  it('a Secret of the wrong type: names it, says the type cannot change and what to do', async () => {
    const { server, run } = setup();
    server.seed(SECRETS, { metadata: { name: 'webhook-tls' }, type: 'Opaque', data: {} });
    const error = await expectCertsError(run());
    expect(error.code).to.equal('WrongSecretType');
    expect(error.message).to.equal(
      'Secret staticsite-system/webhook-tls has type "Opaque", but bootstrap stores the serving certificate in a Secret of type "kubernetes.io/tls". ' +
        "A Secret's type cannot be changed: delete it (kubectl -n staticsite-system delete secret webhook-tls) or choose another name with --secret.",
    );
  });

  it('no permission: the server message, the object and the RBAC file to apply', async () => {
    const { server, run } = setup();
    const message =
      'secrets "webhook-tls-ca" is forbidden: User "system:serviceaccount:staticsite-system:certs" cannot get resource "secrets" in API group "" in the namespace "staticsite-system"';
    server.failNext(on('GET', `${SECRETS}/webhook-tls-ca`), { status: 403, reason: 'Forbidden', message });
    const error = await expectCertsError(run());
    expect(error.code).to.equal('Forbidden');
    expect(error.message).to.equal(
      `cannot get Secret staticsite-system/webhook-tls-ca: ${message}. Bind the bootstrapper's ServiceAccount to the Role in manifests/certs/certs-rbac.yaml ` +
        '(get and patch on Secrets webhook-tls and webhook-tls-ca, create on Secrets, in namespace staticsite-system).',
    );
  });

  it('a concurrent change between read and write is a Conflict, not a silent overwrite', async () => {
    const { server, run, clock } = setup();
    await run();
    clock.set('2026-05-15T00:00:00Z');
    server.failNext(on('PATCH', `${SECRETS}/webhook-tls`), {
      status: 409,
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on secrets "webhook-tls": the object has been modified',
    });
    const error = await expectCertsError(run());
    expect(error.code).to.equal('Conflict');
    expect(error.message).to.include('run bootstrap again (--watch retries by itself)');
  });

  it('corrupt PEM in a Secret names the Secret and key, and says how to start over', async () => {
    const { server, run } = setup();
    await run();
    server.modify<Secret>(SECRETS, 'webhook-tls-ca', (live) => {
      live.data['ca.crt'] = Buffer.from('not pem').toString('base64');
    });
    const error = await expectCertsError(run());
    expect(error.code).to.equal('CorruptPem');
    expect(error.message).to.equal(
      'Secret staticsite-system/webhook-tls-ca key ca.crt is not a PEM certificate bundle (no "-----BEGIN CERTIFICATE-----" block). ' +
        'Delete it (kubectl -n staticsite-system delete secret webhook-tls-ca) and run bootstrap again: a new CA is issued and its bundle injected ' +
        '(the old CA cert stays trusted while it is still in the serving Secret).',
    );
  });
});
