/**
 * Three parity classes against the real kube-apiserver, through the engine, `staticsite validate`
 * (the built CLI) and the webhook (the API server's own AdmissionReviews):
 * - `metadata.selfLink` (and the other system fields a create wipes) never reaches the stored object;
 * - warnings past the recorder's budget (4 Ki runes, then 256 per warning, unencodable ones dropped):
 *   an update ratcheting many failing values, a create with many unknown fields;
 * - object keys that name Object.prototype members (`__proto__`, `constructor`, ...) in maps, list-map
 *   keys, sets, preserved and unknown fields, labels, on create and on update (generated, fixed seed).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import fc from 'fast-check';
import { pino } from 'pino';
import { buildCrd, CRD_NAME, type JSONSchemaProps } from '../../api/index.ts';
import { admit, compileCrdVersion } from '../../crd/index.ts';
import { eventually, installCrd, uninstallCrd } from '../../devenv/crds.ts';
import type { KubeHttp } from '../../devenv/kube-http.ts';
import { loopbackCerts } from '../../devenv/webhook-certs.ts';
import { MUTATING_CONFIGS, VALIDATING_CONFIGS, webhookConfigurations } from '../../devenv/webhook-configs.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../webhook/admission/review.ts';
import {
  createMutator,
  createValidator,
  createWebhookListener,
  SiteSchemas,
  WebhookMetrics,
} from '../../webhook/index.ts';
import { PROTOTYPE_KEYS } from '../fixtures/differential/schema-arbitraries.ts';
import { compareWith, engineObservation, toObservation } from '../fixtures/schema/parity-compare.ts';
import { runBuiltCli } from '../support/built-cli.ts';
import { startBareHttps } from '../support/loopback-servers.ts';
import { testCluster } from '../support/shared.ts';
import { singleVersionCrd } from '../support/single-version-crd.ts';

const GROUP = 'edges.staticsite.test';
const NS = 'default';
const EDGES = `/apis/${GROUP}/v1/namespaces/${NS}/edges`;

const name = { type: 'string', maxLength: 40 } as const;

/** `tight` adds the rule the stored items fail, so that an update ratchets them (a warning each). */
function edgeSchema(tight: boolean): JSONSchemaProps {
  const itemRule = { rule: 'self.size() <= 3', messageExpression: "'too long: ' + self" };
  return {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        'x-kubernetes-validations': [
          { rule: "!has(self.frozen) || !('constructor' in self.frozen) || self.frozen['constructor'] != 'bad'" },
        ],
        properties: {
          frozen: {
            type: 'object',
            maxProperties: 8,
            additionalProperties: {
              type: 'string',
              maxLength: 10,
              'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'immutable' }],
            },
          },
          defaulted: {
            type: 'object',
            maxProperties: 8,
            additionalProperties: { type: 'object', properties: { v: { type: 'string', default: 'dv' } } },
          },
          keyed: {
            type: 'array',
            maxItems: 40,
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: {
              type: 'object',
              required: ['name'],
              properties: {
                name,
                v: { type: 'string', maxLength: 300, ...(tight && { 'x-kubernetes-validations': [itemRule] }) },
              },
            },
          },
          set: { type: 'array', maxItems: 8, 'x-kubernetes-list-type': 'set', items: name },
          kept: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          note: { type: 'string' },
        },
      },
    },
  };
}

const edgeCrd = (tight: boolean) => singleVersionCrd(GROUP, 'Edge', 'edges', edgeSchema(tight));

type Stored = { metadata: Record<string, unknown> } & Record<string, unknown>;
type Response = Awaited<ReturnType<KubeHttp['post']>>;

const object = (metadata: Record<string, unknown>, spec: unknown) => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Edge',
  metadata: { namespace: NS, ...metadata },
  spec,
});

/** Key-dependent shapes: each puts a prototype-named key where a lookup by key happens. */
const protoCaseArb = fc.record({
  key: fc.constantFrom(...PROTOTYPE_KEYS),
  shape: fc.constantFrom(
    'frozen-add',
    'frozen-change',
    'frozen-remove',
    'keyed-add',
    'defaulted',
    'set',
    'kept',
    'unknown',
  ),
  fieldValidation: fc.constantFrom('Warn', 'Strict'),
});
type ProtoCase = typeof protoCaseArb extends fc.Arbitrary<infer T> ? T : never;

/** The old and new spec of a case as JSON text: `__proto__` must stay an ordinary key. */
function protoSpecs(c: ProtoCase): { old: string; next: string } {
  const k = JSON.stringify(c.key);
  switch (c.shape) {
    case 'frozen-add':
      return { old: '{"frozen":{"a":"a"}}', next: `{"frozen":{"a":"a",${k}:"b"}}` };
    case 'frozen-change':
      return { old: `{"frozen":{${k}:"b"}}`, next: `{"frozen":{${k}:"bad"}}` };
    case 'frozen-remove':
      return { old: `{"frozen":{"a":"a",${k}:"b"}}`, next: '{"frozen":{"a":"a"}}' };
    case 'keyed-add':
      return {
        old: '{"keyed":[{"name":"a","v":"1"}]}',
        next: `{"keyed":[{"name":"a","v":"1"},{"name":${k},"v":"2"}]}`,
      };
    case 'defaulted':
      return { old: '{"defaulted":{"a":{}}}', next: `{"defaulted":{"a":{},${k}:{}}}` };
    case 'set':
      return { old: `{"set":[${k}]}`, next: `{"set":["a",${k}]}` };
    case 'kept':
      return { old: '{"kept":{}}', next: `{"kept":{${k}:{"x":1},"y":{${k}:null}}}` };
    case 'unknown':
      return { old: '{"note":"a"}', next: `{"note":"b",${k}:{"a":1}}` };
  }
}

describe('e2e: selfLink, the warning budget and prototype-named keys as kube-apiserver has them', function () {
  this.timeout(300_000);
  let client: KubeHttp;
  let dir: string;

  before(async () => {
    client = (await testCluster()).controlPlane.admin;
    dir = await mkdtemp(join(tmpdir(), 'parity-edges-'));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
    if (client) await uninstallCrd(client, edgeCrd(false).metadata.name);
  });

  /** The engine's answer to what the server was sent, compared with the server's. */
  async function expectSame(
    compiled: ReturnType<typeof compileCrdVersion>,
    sent: unknown,
    send: () => Promise<Response>,
    oldObject?: unknown,
    fieldValidation: 'Warn' | 'Strict' = 'Warn',
  ) {
    const engine = engineObservation(admit(compiled, sent, { namespace: NS, oldObject, fieldValidation }));
    const result = await compareWith(engine, async () => toObservation(await send()), 4);
    expect(result.verdict, result.differences.join('\n')).to.not.equal('different');
    return engine;
  }

  it('prototype-named keys (generated, seed 2026120752): created and updated as the server does', async () => {
    await installCrd(client, edgeCrd(false));
    const compiled = compileCrdVersion(edgeCrd(false), 'v1');
    const cases = fc.sample(protoCaseArb, { seed: 2026120752, numRuns: 24 });
    expect(new Set(cases.map((c) => c.key)).size, 'every key is drawn').to.equal(PROTOTYPE_KEYS.length);
    for (const [i, c] of cases.entries()) {
      const specs = protoSpecs(c);
      const query = { dryRun: 'All', fieldValidation: c.fieldValidation };
      const created = JSON.parse(
        `{"apiVersion":"${GROUP}/v1","kind":"Edge","metadata":{"name":"c${i}"},"spec":${specs.next}}`,
      );
      await expectSame(
        compiled,
        created,
        () => client.post(EDGES, JSON.stringify(created), { query }),
        undefined,
        c.fieldValidation,
      );

      const first = JSON.parse(
        `{"apiVersion":"${GROUP}/v1","kind":"Edge","metadata":{"name":"u${i}"},"spec":${specs.old}}`,
      );
      const stored = await client.post<Stored>(EDGES, JSON.stringify(first), { query: { fieldValidation: 'Ignore' } });
      expect(stored.status, stored.text).to.equal(201);
      const next = { ...stored.body, spec: JSON.parse(specs.next) };
      const path = `${EDGES}/u${i}`;
      await expectSame(
        compiled,
        next,
        () => client.put(path, JSON.stringify(next), { query }),
        stored.body,
        c.fieldValidation,
      );
      await client.delete(path);
    }
  });

  it('schema properties named __proto__ and toString: defaulted, and keys of a map-type list', async () => {
    // JSON text: a `__proto__` written in an object literal would be the prototype, not a property.
    const schema = JSON.parse(`{"type":"object","properties":{"spec":{"type":"object","properties":{
      "__proto__":{"type":"string","default":"d"},
      "l":{"type":"array","maxItems":4,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["__proto__","toString"],
        "items":{"type":"object","required":["__proto__"],"properties":{
          "__proto__":{"type":"string"},"toString":{"type":"string","default":"t"}}}}}}}}`);
    const crd = singleVersionCrd(GROUP, 'ProtoEdge', 'protoedges', schema);
    await installCrd(client, crd);
    const compiled = compileCrdVersion(crd, 'v1');
    const path = `/apis/${GROUP}/v1/namespaces/${NS}/protoedges`;
    try {
      for (const spec of [
        '{}',
        '{"__proto__":null,"l":[{"__proto__":"a"},{"__proto__":"a","toString":"u"}]}',
        '{"l":[{"__proto__":"a"},{"__proto__":"a"}]}',
      ]) {
        const text = `{"apiVersion":"${GROUP}/v1","kind":"ProtoEdge","metadata":{"name":"p"},"spec":${spec}}`;
        await expectSame(compiled, JSON.parse(text), () => client.post(path, text, { query: { dryRun: 'All' } }));
      }
    } finally {
      await uninstallCrd(client, crd.metadata.name);
    }
  });

  it('metadata.selfLink and the system fields: wiped on create, never stored on update', async () => {
    await installCrd(client, edgeCrd(false));
    const compiled = compileCrdVersion(edgeCrd(false), 'v1');
    const sent = object(
      {
        name: 'self',
        selfLink: '/somewhere',
        deletionTimestamp: '2026-01-01T00:00:00Z',
        deletionGracePeriodSeconds: 5,
      },
      { note: 'a' },
    );
    const created = await expectSame(compiled, sent, () => client.post(EDGES, sent, { query: { dryRun: 'All' } }));
    expect(created.object).to.have.nested.property('metadata.name', 'self');
    expect(created.object).to.not.have.nested.property('metadata.selfLink');

    const stored = await client.must<Stored>('POST', EDGES, object({ name: 'self' }, { note: 'a' }));
    const next = { ...stored, metadata: { ...stored.metadata, selfLink: '/elsewhere' }, spec: { note: 'b' } };
    // A real write: a dry-run update answers with the object before storage, selfLink included.
    await expectSame(compiled, next, () => client.put(`${EDGES}/self`, next), stored);
    await client.delete(`${EDGES}/self`);

    const file = join(dir, 'self.json');
    await writeFile(file, JSON.stringify(sent));
    const cli = await runBuiltCli(['validate', '--crd', await crdFile(edgeCrd(false)), '-o', 'json', file]);
    const line = JSON.parse(cli.stdout.trim()) as { object: { metadata: Record<string, unknown> } };
    expect(line.object.metadata).to.not.have.any.keys('selfLink', 'deletionTimestamp', 'deletionGracePeriodSeconds');
  });

  async function crdFile(crd: unknown): Promise<string> {
    const file = join(dir, `crd-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, JSON.stringify(crd));
    return file;
  }

  it('warnings past the budget: an update ratcheting 30 failing values, a create with 200 unknown fields', async () => {
    await installCrd(client, edgeCrd(false));
    // Long, multi-byte values (runes, not bytes, are counted); one ends past 256 runes in a newline,
    // which no header carries whole but its first 256 runes can be.
    const items = Array.from({ length: 30 }, (_, i) => ({ name: `k${i}`, v: `${'é'.repeat(180)}${i}` }));
    items.splice(3, 0, { name: 'nl', v: `${'b'.repeat(270)}\n` }, { name: 'nl2', v: 'cc\nd' });
    const stored = await client.must<Stored>('POST', EDGES, object({ name: 'ratchet' }, { keyed: items }));
    const tight = edgeCrd(true);
    await installCrd(client, tight);
    await eventually('the tight schema in force', async () => {
      const probe = object({ name: 'probe' }, { keyed: [{ name: 'a', v: 'long' }] });
      return (await client.post(EDGES, probe, { query: { dryRun: 'All' } })).status === 422;
    });
    const compiled = compileCrdVersion(tight, 'v1');
    const next = { ...stored, spec: { ...(stored.spec as object), note: 'changed' } };
    const update = await expectSame(
      compiled,
      next,
      () => client.put(`${EDGES}/ratchet`, next, { query: { dryRun: 'All' } }),
      stored,
    );
    expect(update.result.warnings.length, 'the engine ratchets every item').to.equal(32);
    expect(update.warnings.length, 'the client sees fewer').to.be.within(2, 20);

    const unknown = Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [`unknown-${'x'.repeat(i % 40)}-${i}`, i]),
    );
    const wide = object({ name: 'wide' }, { note: 'a', ...unknown, 'q"uote': 1, 'back\\slash': 2, 'new\nline': 3 });
    const create = await expectSame(compiled, wide, () => client.post(EDGES, wide, { query: { dryRun: 'All' } }));
    expect(create.warnings.length).to.be.below(create.result.warnings.length);

    // staticsite validate prints what the server's client sees.
    const [oldFile, nextFile, wideFile] = [join(dir, 'old.json'), join(dir, 'next.json'), join(dir, 'wide.json')];
    await writeFile(oldFile, JSON.stringify(stored));
    await writeFile(nextFile, JSON.stringify(next));
    await writeFile(wideFile, JSON.stringify(wide));
    const crd = await crdFile(tight);
    const ratcheted = await runBuiltCli(['validate', '--crd', crd, '--old', oldFile, '-o', 'json', nextFile]);
    expect((JSON.parse(ratcheted.stdout.trim()) as { warnings: string[] }).warnings).to.deep.equal(update.warnings);
    const widened = await runBuiltCli(['validate', '--crd', crd, '--field-validation', 'Warn', '-o', 'json', wideFile]);
    expect((JSON.parse(widened.stdout.trim()) as { warnings: string[] }).warnings).to.deep.equal(create.warnings);
    await client.delete(`${EDGES}/ratchet`);
  });

  it('the webhook answers the API server with the warnings, keys and fields the server keeps', async () => {
    const certs = await loopbackCerts();
    const schemas = new SiteSchemas();
    const validate = createValidator({ schemas });
    const mutate = createMutator({ schemas, baseDomain: 'sites.example.com' });
    const seen: Array<{ request: AdmissionRequest; response: AdmissionResponse; path: 'mutate' | 'validate' }> = [];
    const record =
      (path: 'mutate' | 'validate', review: (r: AdmissionRequest) => AdmissionResponse) =>
      (request: AdmissionRequest) => {
        const response = review(request);
        if (request.name?.startsWith('edge-')) seen.push({ request, response, path });
        return response;
      };
    const listener = createWebhookListener({
      mutate: record('mutate', mutate),
      validate: record('validate', validate),
      metrics: new WebhookMetrics(),
      logger: pino({ level: 'silent' }),
    });
    const server = await startBareHttps(certs.dir, listener);
    const ns = 'parity-edges';
    const sites = `/apis/staticsite.dev/v1/namespaces/${ns}/staticsites`;
    const cp = (await testCluster()).controlPlane;
    const { mutating, validating } = webhookConfigurations(
      `https://127.0.0.1:${server.port}`,
      certs.caBundle,
      'parity-edges',
    );
    try {
      await cp.ensureNamespace(ns);
      await installCrd(client, buildCrd({ schemaOnly: true }));
      await client.must('POST', MUTATING_CONFIGS, mutating);
      await client.must('POST', VALIDATING_CONFIGS, validating);
      const site = (siteName: string, metadata: Record<string, unknown> = {}) => ({
        apiVersion: 'staticsite.dev/v1',
        kind: 'StaticSite',
        metadata: { name: siteName, ...metadata },
        spec: { content: '<h1>edge</h1>', replicas: 2, tier: 'prod', hostname: `${siteName}.example.com` },
      });
      await eventually('the webhooks called', async () => {
        await client.post(sites, site('edge-probe'), { query: { dryRun: 'All' } });
        return seen.some((s) => s.path === 'validate');
      });

      // 60 finalizers without a domain: a warning each, 6,000 runes in all.
      seen.length = 0;
      const finalizers = Array.from({ length: 60 }, (_, i) => `finalizer-${i}`);
      const many = await client.post<Stored>(sites, site('edge-finalizers', { finalizers }), {
        query: { dryRun: 'All' },
      });
      expect(many.status, many.text).to.equal(201);
      const headers = toObservation(many).warnings;
      expect(headers.length).to.be.within(2, 59);
      const validated = seen.find((s) => s.path === 'validate');
      expect(validated?.response.warnings, 'the webhook warns as the server does').to.deep.equal(headers);

      // An update carrying a selfLink and prototype-named labels and annotations: allowed, and stored without the selfLink.
      const created = await client.must<Stored>('POST', sites, site('edge-update'));
      seen.length = 0;
      // `__proto__` is no valid label or annotation key, for the server as for the engine.
      const labels = JSON.parse('{"constructor":"a","toString":"b","valueOf":"c"}');
      const annotations = JSON.parse('{"hasOwnProperty":"x","isPrototypeOf":"y"}');
      const metadata = { ...created.metadata, selfLink: '/x', labels, annotations };
      const next = { ...created, metadata };
      const updated = await client.put<Stored>(`${sites}/edge-update`, JSON.stringify(next));
      expect(updated.status, updated.text).to.equal(200);
      expect(updated.body.metadata).to.not.have.property('selfLink');
      expect(Object.keys(updated.body.metadata.labels as object)).to.include('constructor');
      const mutated = seen.find((s) => s.path === 'mutate');
      expect(mutated?.request.object).to.have.nested.property('metadata.selfLink', '/x');
      expect(mutated?.response.allowed).to.equal(true);
      const validatedUpdate = seen.find((s) => s.path === 'validate');
      expect(validatedUpdate?.response.allowed, JSON.stringify(validatedUpdate?.response.status)).to.equal(true);
      expect(validatedUpdate?.response.warnings ?? []).to.deep.equal(toObservation(updated).warnings);
    } finally {
      try {
        const left = await client.get<{ items?: Stored[] }>(sites);
        for (const s of left.body?.items ?? [])
          await client.patch(`${sites}/${s.metadata.name}`, { metadata: { finalizers: null } });
        await client.delete(`${MUTATING_CONFIGS}/${mutating.metadata.name}`);
        await client.delete(`${VALIDATING_CONFIGS}/${validating.metadata.name}`);
        await uninstallCrd(client, CRD_NAME);
      } finally {
        await server.close();
        await rm(certs.dir, { recursive: true, force: true });
      }
    }
  });
});
