import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { CONTROLLER_USER, controllerHistory } from '../support/upgrade-drill/audit.ts';
import { type ChildSnapshot, childWrites } from '../support/upgrade-drill/children.ts';
import { judge } from '../support/upgrade-drill/traffic.ts';

/** One audit event of the kind the drill's policy logs, at `second` seconds past a fixed minute. */
function event(fields: {
  verb: string;
  uri: string;
  pod: string;
  second: number;
  code?: number;
  holder?: string;
  user?: string;
}) {
  const at = `2026-12-07T04:00:${String(fields.second).padStart(2, '0')}.123456Z`;
  return JSON.stringify({
    stage: 'ResponseComplete',
    verb: fields.verb,
    requestURI: fields.uri,
    user: {
      username: fields.user ?? CONTROLLER_USER,
      extra: { 'authentication.kubernetes.io/pod-name': [fields.pod] },
    },
    objectRef: { name: fields.uri.split('?')[0]?.split('/').at(-1) },
    responseStatus: { code: fields.code ?? 200 },
    ...(fields.holder !== undefined && {
      requestObject: { spec: { holderIdentity: fields.holder, leaseDurationSeconds: 15 } },
    }),
    requestReceivedTimestamp: at,
    stageTimestamp: at,
  });
}

const LEASE = '/apis/coordination.k8s.io/v1/namespaces/staticsite-system/leases/staticsite-controller';
const second = (s: number) => Date.parse(`2026-12-07T04:00:${String(s).padStart(2, '0')}.123Z`);

describe('upgrade drill: the controller history from the audit log', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'audit-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('one replica per pod, named by the holder it wrote; Lease writes from the whole log, others from `since`', async () => {
    const path = join(dir, 'audit.log');
    const lines = [
      event({ verb: 'update', uri: LEASE, pod: 'old', second: 1, holder: 'old_1' }),
      event({ verb: 'update', uri: '/api/v1/namespaces/web/configmaps/a', pod: 'old', second: 2 }),
      event({ verb: 'update', uri: LEASE, pod: 'new', second: 10, holder: 'new_2' }),
      event({ verb: 'patch', uri: '/api/v1/namespaces/web/services/a?fieldManager=x', pod: 'new', second: 11 }),
      event({ verb: 'update', uri: '/api/v1/namespaces/web/services/a', pod: 'x', second: 12, user: 'admin' }),
    ];
    await writeFile(path, `${lines.join('\n')}\n`);
    const history = await controllerHistory(path, second(5));
    expect(history.replicas.map((r) => r.identity)).to.deep.equal(['old_1', 'new_2']);
    const [old, fresh] = history.replicas;
    expect(old?.requests.map((r) => `${r.method} ${r.path} ${r.holder ?? '-'}`)).to.deep.equal([`PUT ${LEASE} old_1`]);
    expect(fresh?.requests.map((r) => `${r.method} ${r.path}`)).to.deep.equal([
      `PUT ${LEASE}`,
      'PATCH /api/v1/namespaces/web/services/a',
    ]);
    expect(fresh?.requests[0]?.leaseDurationSeconds).to.equal(15);
    expect(fresh?.requests[1]?.at).to.equal(second(11));
  });
});

describe('upgrade drill: child writes against the children before and after', () => {
  const snapshot = (entries: Record<string, string>): ChildSnapshot =>
    new Map(Object.entries(entries).map(([key, content]) => [key, { resourceVersion: '1', content }]));
  const write = (path: string, at: number, status = 200) => ({ method: 'PUT', path, status, at });
  const ns = '/api/v1/namespaces/web';

  it('a write that changed a child is needed once; one that changed nothing, or a second one, is not', () => {
    const before = snapshot({ 'configmaps/a': 'x', 'services/a': 'y', 'configmaps/b': 'z' });
    const after = snapshot({ 'configmaps/a': 'x2', 'services/a': 'y', 'configmaps/b': 'z2' });
    const requests = [
      write(`${ns}/configmaps/a`, 10),
      write(`${ns}/services/a`, 11),
      write(`${ns}/configmaps/b`, 12),
      write(`${ns}/configmaps/b`, 13),
      write(`${ns}/configmaps/b`, 14, 409),
      write(`${ns}/configmaps/churned`, 15),
      write(`${ns}/configmaps/a`, 99),
      { method: 'PUT', path: '/apis/staticsite.dev/v1/namespaces/web/staticsites/a/status', status: 200, at: 16 },
    ];
    const result = childWrites({
      history: { replicas: [{ identity: 'r', requests }] },
      namespace: 'web',
      before,
      after,
      from: 0,
      to: 50,
    });
    expect(result.writes).to.deep.equal({ 'configmaps/a': 1, 'services/a': 1, 'configmaps/b': 2 });
    expect(result.changed).to.deep.equal(['configmaps/a', 'configmaps/b']);
    expect(result.needless).to.deep.equal([
      'services/a: written 1 time(s), nothing changed',
      'configmaps/b: written 2 times for one change',
    ]);
    expect(result.statusWrites).to.deep.equal({ 'staticsites/a': 1 });
  });
});

describe('upgrade drill: how the writing client judges an answer', () => {
  const answer = (status: number, body: unknown) => ({
    status,
    body,
    text: typeof body === 'string' ? body : JSON.stringify(body),
    warnings: [],
  });
  const mutated = { metadata: { finalizers: ['staticsite.dev/external-record'] } };
  const duplicate = { denied: 'duplicate hostname (webhook)', by: ['admission webhook', 'Duplicate value'] };

  it('a success through the mutating webhook is ok; without its finalizer the write skipped admission', () => {
    expect(judge('create', answer(201, mutated), { ok: [201], mutated: true })).to.deep.equal({ key: 'create ok' });
    expect(judge('create', answer(201, { metadata: {} }), { ok: [201], mutated: true }).failure).to.equal(
      'admitted without the mutating webhook',
    );
  });

  it('a webhook that cannot be called, no answer, or a rule not enforced is a failure', () => {
    const unavailable = answer(500, {
      message:
        'Internal error occurred: failed calling webhook "mutate.staticsite.dev": failed to call webhook: connection refused',
    });
    expect(judge('create', unavailable, { ok: [201], mutated: true })).to.include({ key: 'create 500' });
    expect(judge('create', unavailable, duplicate).failure).to.include('failed calling webhook');
    expect(judge('create', undefined, { ok: [201] }).failure).to.equal('no answer');
    expect(judge('create', answer(201, mutated), duplicate).failure).to.not.equal(undefined);
  });

  it("the rule's own denial is counted under the rule", () => {
    const denial = answer(422, {
      message:
        'admission webhook "validate.staticsite.dev" denied the request: StaticSite.staticsite.dev "x" is invalid: spec.hostname: Duplicate value: "a"',
    });
    expect(judge('create', denial, duplicate)).to.deep.equal({ key: 'create denied: duplicate hostname (webhook)' });
  });
});
