/**
 * JSON text read as kube-apiserver reads it, the server as the oracle: the same raw text is POSTed
 * to the server (dry run) and read by `staticsite validate`'s JSON reader and the engine, then by the
 * built CLI; the webhook gets the API server's own AdmissionReviews. The shapes JSON.parse reads
 * otherwise: integers beyond 2^53 and at the int64 limits (schema bounds, CEL comparisons and
 * overflow, set identity, stored digits), one beyond int64, numbers beyond float64 (`1e400`), lone
 * surrogate escapes, keys repeated under each field validation. And the one the engine reads as
 * kubectl sends it rather than as written: an integral float (`1.0`, `1e18`), which kubectl writes
 * as an integer (its own client-side output is the oracle for that).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import jsonPatch from 'fast-json-patch';
import { pino } from 'pino';
import { buildCrd, CRD_NAME, type JSONSchemaProps } from '../../api/index.ts';
import { documentsOf, parseDocuments } from '../../cli/validate/documents.ts';
import { readJsonDocument, textDecodingOf } from '../../cli/validate/json-document.ts';
import { admit, compileCrdVersion, type FieldValidation } from '../../crd/index.ts';
import { parseJsonInt64, stringifyJson } from '../../crd/json-int64.ts';
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
import { compareWith, engineObservation, type Observation, toObservation } from '../fixtures/schema/parity-compare.ts';
import { runBuiltCli } from '../support/built-cli.ts';
import { startBareHttps, startLoopbackWebhook } from '../support/loopback-servers.ts';
import { testCluster } from '../support/shared.ts';
import { singleVersionCrd } from '../support/single-version-crd.ts';

const GROUP = 'jsonexact.staticsite.test';
const NS = 'default';
const PATH = `/apis/${GROUP}/v1/namespaces/${NS}/nums`;

const celInteger = (rule: string, message: string): JSONSchemaProps => ({
  type: 'integer',
  'x-kubernetes-validations': [{ rule, message }],
});

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        i: { type: 'integer' },
        i32: { type: 'integer', format: 'int32' },
        // Bounds a float64 holds exactly: compared with an int64 on the int64 path.
        above: { type: 'integer', minimum: 9007199254740994 },
        below: { type: 'integer', maximum: -9007199254740994 },
        n: { type: 'number' },
        s: { type: 'string' },
        big: celInteger('self > 9007199254740992', 'not above 2^53'),
        inc: celInteger('self + 1 > self', 'no successor'),
        dec: celInteger('self - 1 < self', 'no predecessor'),
        one: celInteger('self == 1', 'not one'),
        set: { type: 'array', maxItems: 8, 'x-kubernetes-list-type': 'set', items: { type: 'integer' } },
        kept: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
};
const crd = singleVersionCrd(GROUP, 'Num', 'nums', schema);

const objectText = (spec: string, metadata = '{"name":"n"}') =>
  `{"apiVersion":"${GROUP}/v1","kind":"Num","metadata":${metadata},"spec":${spec}}`;

/** Raw texts the server and the engine must read alike, each under the field validations given. */
const CASES: Array<{ text: string; modes: FieldValidation[] }> = [
  ...[
    '{"i":9007199254740993,"n":9007199254740993,"kept":{"a":9007199254740993,"b":-9223372036854775808,"c":9223372036854775807,"d":[18446744073709551615,-9223372036854775809]}}',
    '{"i":9223372036854775807}',
    '{"i":-9223372036854775808}',
    '{"i":9223372036854775808}',
    '{"i32":9007199254740993}',
    '{"above":9007199254740993}',
    '{"above":9007199254740994,"below":-9007199254740994}',
    '{"below":-9007199254740993}',
    '{"big":9007199254740992}',
    '{"big":9007199254740993}',
    '{"inc":9223372036854775807}',
    '{"inc":9223372036854775806,"dec":-9223372036854775807}',
    '{"dec":-9223372036854775808}',
    '{"one":9007199254740993}',
    '{"set":[9007199254740993,9007199254740992,9007199254740993]}',
    '{"s":"a\\ud800b\\udc00c\\ud83d\\ude00","kept":{"\\ud800":"\\udfff"}}',
    '{"n":1e400}',
    '{"kept":{"x":-1E+400}}',
    '{"i":1e-400,"n":123456789012345678901234567890}',
    '{"n":1e400,"i":1,"i":2}',
  ].map((spec) => ({ text: objectText(spec), modes: ['Strict'] as FieldValidation[] })),
  ...[
    objectText('{"i":1,"s":"x","i":2,"kept":{"a":1,"a":{"b":1,"b":2}},"kept":{"z":9007199254740993}}'),
    objectText('{"q":1,"q":2,"set":[{"a":1,"a":2}]}', '{"name":"a","name":"n","labels":{"x":"1","x":"2"}}'),
  ].map((text) => ({ text, modes: ['Strict', 'Warn', 'Ignore'] as FieldValidation[] })),
];

/** Integral floats: a float64 to the server, an int64 to the engine, as kubectl writes them. */
const KUBECTL_NORMALIZED = [
  { spec: '{"one":1.0}', server: 'spec.one: Invalid value: "integer": invalid data, expected int, got float64' },
  { spec: '{"i":1e18}', server: 'spec.i in body must be of type integer: "number"' },
  { spec: '{"i":-9223372036854775809}', server: 'spec.i in body must be of type integer: "number"' },
  { spec: '{"set":[1,1.0]}', server: undefined },
];

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sortedKeys((value as Record<string, unknown>)[k])]),
  );
}

describe('e2e: JSON text read exactly as kube-apiserver reads it', function () {
  this.timeout(120_000);
  let client: KubeHttp;
  let dir: string;
  const compiled = compileCrdVersion(crd, 'v1');

  before(async () => {
    client = (await testCluster()).controlPlane.admin;
    dir = await mkdtemp(join(tmpdir(), 'json-exact-'));
    await installCrd(client, crd);
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
    if (client) await uninstallCrd(client, crd.metadata.name);
  });

  const post = async (text: string, fieldValidation: FieldValidation) =>
    toObservation(await client.post(PATH, text, { query: { dryRun: 'All', fieldValidation } }));

  /** The engine on the text as `staticsite validate` reads a JSON document. */
  function engineOn(text: string, fieldValidation: FieldValidation) {
    const doc = readJsonDocument(text, 100);
    if (!doc) throw new Error(`not one JSON document: ${text}`);
    const textDecoding = textDecodingOf(doc);
    return engineObservation(admit(compiled, doc.value, { namespace: NS, fieldValidation, textDecoding }));
  }

  const serverAnswers = new Map<string, Observation>();

  it(`${CASES.reduce((n, c) => n + c.modes.length, 0)} raw texts: the same verdict, message, warnings and stored digits`, async () => {
    for (const { text, modes } of CASES) {
      for (const mode of modes) {
        const engine = engineOn(text, mode);
        const result = await compareWith(
          engine,
          async () => {
            const server = await post(text, mode);
            serverAnswers.set(`${mode} ${text}`, server);
            return server;
          },
          4,
        );
        expect(result.verdict, `${mode} ${text}\n${result.differences.join('\n')}`).to.not.equal('different');
      }
    }
    // What the server said, so that a reader sees the shapes were reached.
    const stored = serverAnswers.get(`Strict ${CASES[0]?.text}`)?.object as { spec: { kept: unknown } };
    expect(stringifyJson(stored.spec.kept)).to.equal(
      '{"a":9007199254740993,"b":-9223372036854775808,"c":9223372036854775807,"d":[18446744073709552000,-9223372036854776000]}',
    );
    expect(serverAnswers.get(`Strict ${objectText('{"inc":9223372036854775807}')}`)?.message).to.include(
      'spec.inc: Invalid value: "integer": integer overflow evaluating rule: no successor',
    );
    expect(serverAnswers.get(`Strict ${objectText('{"n":1e400}')}`)?.message).to.equal(
      'Num in version "v1" cannot be handled as a Num: json: cannot unmarshal number 1e400 into Go value of type float64',
    );
    const lone = serverAnswers.get(`Strict ${CASES[15]?.text}`)?.object as { spec: unknown };
    expect(lone.spec).to.deep.equal({ s: 'a\uFFFDb\uFFFDc\u{1F600}', kept: { '\uFFFD': '\uFFFD' } });
    expect(serverAnswers.get(`Warn ${CASES[20]?.text}`)?.warnings).to.deep.equal([
      'duplicate field "spec.i"',
      'duplicate field "spec.kept.a"',
      'duplicate field "spec.kept.a.b"',
      'duplicate field "spec.kept"',
    ]);
  });

  it('integral floats: the server reads the text as float64, the engine as what kubectl sends (kubectl writes them as integers)', async () => {
    const cp = (await testCluster()).controlPlane;
    for (const { spec, server } of KUBECTL_NORMALIZED) {
      const text = objectText(spec);
      const raw = await post(text, 'Strict');
      if (server) expect(raw.message, text).to.include(server);
      else expect(raw.code, `${text}: ${raw.message}`).to.equal(200);
      const kubectl = await cp.kubectl(['create', '--dry-run=client', '-o', 'json', '-f', '-'], text);
      expect(kubectl.code, kubectl.stderr).to.equal(0);
      const sent = stringifyJson(parseJsonInt64(kubectl.stdout));
      const result = await compareWith(engineOn(text, 'Strict'), () => post(sent, 'Strict'), 4);
      expect(result.verdict, `${text} sent by kubectl as ${sent}\n${result.differences.join('\n')}`).to.not.equal(
        'different',
      );
    }
  });

  it('YAML: integers at and beyond 2^53 and the int64 limits as kubectl sends them, a surrogate escape its error', async () => {
    const cp = (await testCluster()).controlPlane;
    const kept = ['9007199254740993', '-9007199254740993', '9223372036854775807', '-9223372036854775808'];
    kept.push(
      '9223372036854775808',
      '-9223372036854775809',
      '0x7fffffffffffffff',
      '1e18',
      '18446744073709551615',
      '1e400',
    );
    const yaml = `apiVersion: ${GROUP}/v1\nkind: Num\nmetadata:\n  name: "y"\nspec:\n  kept:\n${kept.map((v, i) => `    k${i}: ${v}\n`).join('')}`;
    const kubectl = await cp.kubectl(['create', '--dry-run=client', '-o', 'json', '-f', '-'], yaml);
    expect(kubectl.code, kubectl.stderr).to.equal(0);
    const theirs = (parseJsonInt64(kubectl.stdout) as { spec: unknown }).spec;
    const [ours] = await parseDocuments(yaml, 'kept.yaml');
    expect(stringifyJson((ours as { spec: unknown }).spec)).to.equal(stringifyJson(theirs));

    const escaped = `apiVersion: ${GROUP}/v1\nkind: Num\nmetadata:\n  name: "y"\nspec:\n  s: "a\\ud800b"\n`;
    const refused = await cp.kubectl(['create', '--dry-run=client', '-o', 'json', '-f', '-'], escaped);
    expect(refused.stderr).to.include('yaml: line 6: found invalid Unicode character escape code');
    const read = [];
    for await (const d of documentsOf([escaped])) read.push(d);
    expect(read).to.deep.equal([
      { index: 1, error: 'line 6: invalid YAML: found invalid Unicode character escape code' },
    ]);
  });

  it("YAML repeated keys: kubectl keeps the last; in each field validation the server's answer to the same keys in JSON", async () => {
    const yaml = `apiVersion: ${GROUP}/v1\nkind: Num\nmetadata:\n  name: first\n  name: nn\nspec:\n  i: 1\n  s: x\n  i: 2\n  kept:\n    a: 1\n    a:\n      b: 1\n      b: 2\n    base: &base {p: 1}\n    m:\n      <<: *base\n      p: 3\n  kept:\n    z: 9007199254740993\n  set: [{q: 1, q: 2}]\n`;
    // The same keys in JSON; a key merged from `<<` and then written is no repetition, to go-yaml either.
    const json = objectText(
      '{"i":1,"s":"x","i":2,"kept":{"a":1,"a":{"b":1,"b":2},"base":{"p":1},"m":{"p":3}},"kept":{"z":9007199254740993},"set":[{"q":1,"q":2}]}',
      '{"name":"first","name":"nn"}',
    );
    const cp = (await testCluster()).controlPlane;
    const kubectl = await cp.kubectl(['create', '--dry-run=client', '-o', 'json', '-f', '-'], yaml);
    expect(kubectl.code, kubectl.stderr).to.equal(0);
    const documents = [];
    for await (const d of documentsOf([yaml])) documents.push(d);
    const [document] = documents;
    if (!document || !('object' in document)) throw new Error(`not read: ${JSON.stringify(document)}`);
    // kubectl keeps the last of each: the same spec (its keys sorted, as Go writes a map).
    const specOf = (o: unknown) => stringifyJson(sortedKeys((o as { spec: unknown }).spec));
    expect(specOf(document.object)).to.equal(specOf(parseJsonInt64(kubectl.stdout)));
    for (const mode of ['Strict', 'Warn', 'Ignore'] as const) {
      const engine = engineObservation(
        admit(compiled, document.object, { namespace: NS, fieldValidation: mode, textDecoding: document.textDecoding }),
      );
      const result = await compareWith(engine, () => post(json, mode), 4);
      expect(result.verdict, `${mode}\n${result.differences.join('\n')}`).to.not.equal('different');
    }
  });

  it('staticsite validate (the built CLI) prints what the server answered, in each field validation', async () => {
    const crdFile = join(dir, 'crd.json');
    await writeFile(crdFile, JSON.stringify(crd));
    for (const mode of ['Strict', 'Warn', 'Ignore'] as const) {
      const cases = CASES.filter((c) => c.modes.includes(mode));
      const file = join(dir, `objects-${mode}.json`);
      await writeFile(file, cases.map((c) => c.text).join('\n---\n'));
      const cli = await runBuiltCli(['validate', '--crd', crdFile, '--field-validation', mode, '-o', 'json', file]);
      const lines = cli.stdout.trim().split('\n');
      expect(lines, cli.stderr).to.have.length(cases.length);
      for (const [i, line] of lines.entries()) {
        const printed = parseJsonInt64(line) as { code: number; message: string; warnings: string[]; object: unknown };
        const server = serverAnswers.get(`${mode} ${cases[i]?.text}`);
        expect(server, cases[i]?.text).to.not.equal(undefined);
        const where = `${mode} ${cases[i]?.text}`;
        expect(printed.code, where).to.equal(server?.code);
        expect(printed.message, where).to.equal(server?.message);
        expect(printed.warnings, where).to.deep.equal(server?.warnings);
        // The server writes a map's keys sorted (Go's encoding/json).
        const spec = (o: unknown) => stringifyJson(sortedKeys((o as { spec?: unknown } | null)?.spec));
        if (server?.code === 200) expect(spec(printed.object), where).to.equal(spec(server.object));
      }
    }
  });

  it('the webhook reads the reviews the API server sends with every digit: its patch keeps them, its verdict is the server’s', async () => {
    const certs = await loopbackCerts();
    const schemas = new SiteSchemas();
    const validate = createValidator({ schemas });
    const mutate = createMutator({ schemas, baseDomain: 'sites.example.com' });
    const seen: Array<{ request: AdmissionRequest; response: AdmissionResponse }> = [];
    const listener = createWebhookListener({
      mutate: (request) => {
        const response = mutate(request);
        if (request.name?.startsWith('exact-')) seen.push({ request, response });
        return response;
      },
      validate,
      metrics: new WebhookMetrics(),
      logger: pino({ level: 'silent' }),
    });
    const server = await startBareHttps(certs.dir, listener);
    const ns = 'json-exact';
    const sites = `/apis/staticsite.dev/v1/namespaces/${ns}/staticsites`;
    const cp = (await testCluster()).controlPlane;
    const { mutating, validating } = webhookConfigurations(
      `https://127.0.0.1:${server.port}`,
      certs.caBundle,
      'json-exact',
    );
    const site = (name: string, replicas: string) =>
      `{"apiVersion":"staticsite.dev/v1","kind":"StaticSite","metadata":{"name":"${name}"},"spec":{"content":"<h1>x</h1>","replicas":${replicas},"tier":"prod","hostname":"${name}.example.com"}}`;
    try {
      await cp.ensureNamespace(ns);
      await installCrd(client, buildCrd({ schemaOnly: true }));
      await client.must('POST', MUTATING_CONFIGS, mutating);
      await client.must('POST', VALIDATING_CONFIGS, validating);
      await eventually('the webhooks called', async () => {
        await client.post(sites, site('exact-probe', '2'), { query: { dryRun: 'All' } });
        return seen.length > 0;
      });
      for (const replicas of ['9007199254740993', '9223372036854775807', '-9223372036854775808']) {
        seen.length = 0;
        const answer = toObservation(await client.post(sites, site('exact-a', replicas), { query: { dryRun: 'All' } }));
        expect(answer.code, answer.message).to.equal(422);
        expect(answer.message).to.include(`Invalid value: ${replicas}:`);
        const mutated = seen[0];
        expect(mutated, 'the mutating webhook was called').to.not.equal(undefined);
        const object = mutated?.request.object as { spec: { replicas: unknown } };
        expect(object.spec.replicas).to.equal(BigInt(replicas));
        // The patch, applied to the object sent, keeps the digits; the validator denies as the server did.
        const patch = JSON.parse(
          Buffer.from(mutated?.response.patch ?? '', 'base64').toString(),
        ) as jsonPatch.Operation[];
        const patched = jsonPatch.applyPatch(structuredClone(object), patch).newDocument;
        expect(stringifyJson(patched)).to.include(`"replicas":${replicas},`);
        const verdict = validate({ ...(mutated?.request as AdmissionRequest), object: patched });
        expect(verdict.allowed).to.equal(false);
        expect(answer.message).to.include(verdict.status?.message?.replace(/^.*? is invalid: /, '') ?? '(none)');
      }
    } finally {
      await client.delete(`${MUTATING_CONFIGS}/${mutating.metadata.name}`);
      await client.delete(`${VALIDATING_CONFIGS}/${validating.metadata.name}`);
      await uninstallCrd(client, CRD_NAME);
      await server.close();
      await rm(certs.dir, { recursive: true, force: true });
    }
  });

  it('conversion: the shipped webhook server converts a stored int64 limit to v1alpha1 and back digit for digit', async () => {
    const certs = await loopbackCerts();
    const webhook = await startLoopbackWebhook(certs.dir, { logger: pino({ level: 'silent' }) });
    const ns = 'json-exact-convert';
    const v1 = `/apis/staticsite.dev/v1/namespaces/${ns}/staticsites`;
    const v1alpha1 = `/apis/staticsite.dev/v1alpha1/namespaces/${ns}/staticsites`;
    const cp = (await testCluster()).controlPlane;
    try {
      await cp.ensureNamespace(ns);
      const convert = { url: `https://127.0.0.1:${webhook.port}/convert`, caBundle: certs.caBundle };
      await installCrd(client, buildCrd({ conversionClientConfig: convert }));
      const created = await client.must<{ metadata: Record<string, unknown> }>('POST', v1, {
        apiVersion: 'staticsite.dev/v1',
        kind: 'StaticSite',
        metadata: { name: 'big' },
        spec: { content: 'x', hostname: 'big.example.com' },
      });
      // status.observedGeneration is an int64 without bounds: the status subresource stores it as sent.
      const status = `{"apiVersion":"staticsite.dev/v1","kind":"StaticSite","metadata":{"name":"big","resourceVersion":"${created.metadata.resourceVersion}"},"status":{"observedGeneration":9223372036854775807,"readyReplicas":1}}`;
      const written = await client.put(`${v1}/big/status`, status);
      expect(written.status, written.text).to.equal(200);
      await eventually('v1alpha1 served through the conversion webhook', async () => {
        const res = await client.get(`${v1alpha1}/big`);
        return res.status === 200;
      });
      const read = await client.get(`${v1alpha1}/big`);
      expect(read.text).to.include('"observedGeneration":9223372036854775807');
      const back = parseJsonInt64(read.text) as { apiVersion: string; status: { observedGeneration: unknown } };
      expect(back.apiVersion).to.equal('staticsite.dev/v1alpha1');
      expect(back.status.observedGeneration).to.equal(9223372036854775807n);
      // And a v1alpha1 write converted to v1 for storage keeps it too.
      const again = await client.put(`${v1alpha1}/big`, read.text.replace('"content":"x"', '"content":"y"'));
      expect(again.status, again.text).to.equal(200);
      expect((await client.get(`${v1}/big`)).text).to.include('"observedGeneration":9223372036854775807');
      await client.delete(`${v1}/big`);
    } finally {
      await uninstallCrd(client, CRD_NAME);
      await webhook.close();
      await rm(certs.dir, { recursive: true, force: true });
    }
  });
});
