import { expect } from 'chai';
import { parseRfc3339 } from '../../crd/apimachinery/go-time.ts';
import { type AdmitOptions, admit, simpleNameGenerator } from '../../crd/index.ts';
import { thingVersion } from '../support/thing-crd.ts';

// Decode messages: encoding/json's UnmarshalTypeError ("json: cannot unmarshal %s into Go struct
// field %s.%s of type %s") with the struct path sigs.k8s.io/json records, time.ParseError
// (go/src/time/format.go, ParseError.Error), both wrapped by handlers/rest.go:252. Each was also
// returned by kube-apiserver v1.37.2 in test/e2e/schema-parity.test.ts.

const TARGET: AdmitOptions = { namespace: 'default' };
const compiled = thingVersion({ type: 'object', properties: { spec: { type: 'object' } } });
const withMeta = (metadata: Record<string, unknown>) => ({
  apiVersion: 'example.com/v1',
  kind: 'Thing',
  metadata,
  spec: {},
});
const PREFIX = 'Thing in version "v1" cannot be handled as a Thing: ';

describe('schema engine: ObjectMeta decoding', () => {
  it('drops fields ObjectMeta does not have, and reports nested ones with their index', () => {
    const result = admit(
      compiled,
      withMeta({
        name: 'a',
        color: 'red',
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'u', bogus: 1 }],
      }),
      TARGET,
    );
    expect(result.warnings).to.deep.equal([
      'unknown field "metadata.color"',
      'unknown field "metadata.ownerReferences[0].bogus"',
    ]);
    expect(result.object?.metadata).to.deep.equal({
      name: 'a',
      namespace: 'default',
      generation: 1,
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'u' }],
    });
  });

  it('a wrong type is a 400 naming the Go struct field', () => {
    expect(admit(compiled, withMeta({ name: 'a', ownerReferences: [{ apiVersion: 5 }] }), TARGET).message).to.equal(
      `${PREFIX}json: cannot unmarshal number into Go struct field OwnerReference.ownerReferences.apiVersion of type string`,
    );
    expect(admit(compiled, withMeta({ name: 'a', generation: 1.5 }), TARGET).message).to.equal(
      `${PREFIX}json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.generation of type int64`,
    );
    expect(admit(compiled, { ...withMeta({}), metadata: 'x' }, TARGET).message).to.equal(
      `${PREFIX}json: cannot unmarshal string into Go value of type v1.ObjectMeta`,
    );
  });

  it('a label value of null becomes the empty string', () => {
    const result = admit(compiled, withMeta({ name: 'a', labels: { x: null } }), TARGET);
    expect(result.object?.metadata).to.deep.include({ labels: { x: '' } });
  });

  it('owner references are validated (apimachinery api/validation/objectmeta.go:72)', () => {
    const result = admit(
      compiled,
      withMeta({ name: 'a', ownerReferences: [{ apiVersion: 'a/b/c', kind: 'K', name: 'n', uid: 'u' }] }),
      TARGET,
    );
    expect(result.errors.map(String)).to.deep.equal([
      'metadata.ownerReferences[0].apiVersion: Invalid value: "a/b/c": must be <group>/<version> or <version>',
    ]);
  });

  it('generateName: with a generator the name is made and validated, as the API server does', () => {
    // kube-apiserver answered: StaticSite.staticsite.dev "Bad-ck5sx" is invalid: [metadata.generateName: ..., metadata.name: ...]
    const generateName = simpleNameGenerator(() => 0);
    const result = admit(compiled, withMeta({ generateName: 'Bad-' }), { ...TARGET, generateName });
    expect(result.message).to.match(
      /^Thing\.example\.com "Bad-bbbbb" is invalid: \[metadata\.generateName: Invalid value: "Bad-": /,
    );
    expect(result.errors.map((e) => e.field)).to.deep.equal(['metadata.generateName', 'metadata.name']);
    const ok = admit(compiled, withMeta({ generateName: 'site-' }), { ...TARGET, generateName });
    expect(ok.object?.metadata).to.deep.include({ name: 'site-bbbbb', generateName: 'site-' });
  });

  it('never changes the input object', () => {
    const input = withMeta({ name: 'a', color: 'red' });
    const before = JSON.stringify(input);
    admit(compiled, input, { ...TARGET, fieldValidation: 'Ignore' });
    expect(JSON.stringify(input)).to.equal(before);
  });
});

describe('schema engine: RFC 3339 times as metav1.Time decodes them', () => {
  it('accepts RFC 3339 and writes UTC whole seconds back (metav1/time.go MarshalJSON)', () => {
    expect(parseRfc3339('2024-01-02T03:04:05.5+02:00')).to.deep.equal({ ok: true, utc: '2024-01-02T01:04:05Z' });
  });

  it('the UTC whole-second form comes back unchanged, and its out-of-range fields are still refused', () => {
    for (const valid of [
      '2026-11-29T16:43:13Z',
      '2024-02-29T23:59:59Z',
      '0000-01-01T00:00:00Z',
      '9999-12-31T23:59:59Z',
    ]) {
      expect(parseRfc3339(valid)).to.deep.equal({ ok: true, utc: valid });
    }
    // time.Parse's range checks (format.go): hour < 24, minute and second < 60, day within the month.
    expect(parseRfc3339('2024-01-02T24:00:00Z')).to.deep.equal({
      ok: false,
      error: 'parsing time "2024-01-02T24:00:00Z": hour out of range',
    });
    expect(parseRfc3339('2024-01-02T00:60:00Z')).to.deep.equal({
      ok: false,
      error: 'parsing time "2024-01-02T00:60:00Z": minute out of range',
    });
    expect(parseRfc3339('2024-01-02T00:00:60Z')).to.deep.equal({
      ok: false,
      error: 'parsing time "2024-01-02T00:00:60Z": second out of range',
    });
    expect(parseRfc3339('2024-04-31T00:00:00Z')).to.deep.equal({
      ok: false,
      error: 'parsing time "2024-04-31T00:00:00Z": day out of range',
    });
    expect(parseRfc3339('2024-00-10T00:00:00Z')).to.deep.equal({
      ok: false,
      error: 'parsing time "2024-00-10T00:00:00Z": month out of range',
    });
  });

  it('reports where parsing stopped, as time.ParseError does', () => {
    const layout = '"2006-01-02T15:04:05Z07:00"';
    expect(parseRfc3339('bad')).to.deep.equal({
      ok: false,
      error: `parsing time "bad" as ${layout}: cannot parse "bad" as "2006"`,
    });
    expect(parseRfc3339('2024-01-02')).to.deep.equal({
      ok: false,
      error: `parsing time "2024-01-02" as ${layout}: cannot parse "" as "T"`,
    });
    expect(parseRfc3339('2024-13-01T00:00:00Z')).to.deep.equal({
      ok: false,
      error: 'parsing time "2024-13-01T00:00:00Z": month out of range',
    });
    expect(parseRfc3339('2023-02-29T00:00:00Z')).to.deep.equal({
      ok: false,
      error: 'parsing time "2023-02-29T00:00:00Z": day out of range',
    });
  });
});

describe('schema engine: requests the API server rejects before decoding', () => {
  it('another version of the same group: every field but the type and object meta is unknown', () => {
    const result = admit(
      compiled,
      { ...withMeta({ name: 'a' }), apiVersion: 'example.com/v2' },
      { ...TARGET, fieldValidation: 'Strict' },
    );
    expect(result.message).to.equal(
      'Thing in version "v2" cannot be handled as a Thing: strict decoding error: unknown field "spec"',
    );
  });

  it('another group, or no apiVersion (handlers/create.go)', () => {
    expect(admit(compiled, { ...withMeta({ name: 'a' }), apiVersion: undefined }, TARGET).message).to.equal(
      'the API version in the data () does not match the expected API version (example.com/v1)',
    );
  });

  it('no kind (the unstructured scheme), with the body summarised to 30 bytes', () => {
    const result = admit(compiled, { apiVersion: 'example.com/v1', spec: {} }, TARGET);
    expect(result.message).to.equal(
      'the object provided is unrecognized (must be of type Thing): Object \'Kind\' is missing in \'{"apiVersion":"example.com/v1","spec":{}}\' ({"apiVersion":"example.com/v1" ...)',
    );
  });

  it('another kind fails type-meta validation alone, under its own name', () => {
    const result = admit(compiled, { ...withMeta({ name: 'a' }), kind: 'Other' }, TARGET);
    expect(result.message).to.equal('Other.example.com "a" is invalid: kind: Invalid value: "Other": must be Thing');
  });
});

describe('schema engine: hostile input is an answer, never an exception', () => {
  const version = thingVersion({
    type: 'object',
    properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } },
  });
  const parsed = (json: string) => JSON.parse(json) as unknown;

  it('prototype names in metadata are unknown fields like any other (encoding/json knows no such fields)', () => {
    const result = admit(
      version,
      parsed(
        '{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a","__proto__":{"x":1},"constructor":1,"toString":2,"hasOwnProperty":3,"valueOf":4},"spec":{}}',
      ),
      TARGET,
    );
    expect(result.allowed).to.equal(true);
    expect(result.warnings).to.deep.equal([
      'unknown field "metadata.__proto__"',
      'unknown field "metadata.constructor"',
      'unknown field "metadata.hasOwnProperty"',
      'unknown field "metadata.toString"',
      'unknown field "metadata.valueOf"',
    ]);
    const strict = admit(
      version,
      parsed('{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a","constructor":1},"spec":{}}'),
      { ...TARGET, fieldValidation: 'Strict' },
    );
    expect(strict.code).to.equal(400);
    expect(strict.message).to.equal(
      'Thing in version "v1" cannot be handled as a Thing: strict decoding error: unknown field "metadata.constructor"',
    );
  });

  it('a __proto__ key in the spec or in labels stays an ordinary key', () => {
    const result = admit(
      version,
      parsed(
        '{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a","labels":{"__proto__":"x"}},"spec":{"__proto__":{"polluted":true}}}',
      ),
      TARGET,
    );
    expect(result.warnings).to.deep.equal(['unknown field "spec.__proto__"']);
    expect(Object.getPrototypeOf(result.object?.spec)).to.equal(Object.prototype);
    const labels = (result.object?.metadata as { labels: Record<string, string> } | undefined)?.labels ?? {};
    expect(Object.getOwnPropertyDescriptor(labels, '__proto__')?.value).to.equal('x');
  });

  it('130,000 unknown fields or finalizers: warnings, not a stack overflow', () => {
    const spec: Record<string, number> = {};
    for (let i = 0; i < 130_000; i++) spec[`f${i}`] = i;
    const result = admit(version, { ...withMeta({ name: 'a' }), spec }, TARGET);
    expect(result.code).to.equal(200);
    expect(result.warnings).to.have.length(130_000);
    const finalizers = Array.from({ length: 130_000 }, (_, i) => `example.com/f${i}`);
    expect(admit(version, withMeta({ name: 'a', finalizers }), TARGET).code).to.equal(200);
  });

  it('an old object whose metadata does not decode: a 400 that says so', () => {
    const result = admit(version, withMeta({ name: 'a' }), { ...TARGET, oldObject: withMeta({ name: 5 }) });
    expect(result.code).to.equal(400);
    expect(result.message).to.equal(
      'the old object cannot be decoded: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string',
    );
  });
});
