import { expect } from 'chai';
import type { JSONSchemaProps } from '../../api/index.ts';
import { type AdmitOptions, admit, CEL_SKIPPED_DETAIL, type FieldValidation } from '../../crd/index.ts';
import { thingVersion } from '../support/thing-crd.ts';

// Messages: kube-openapi pkg/validation/errors/schema.go (the "%s in %s ..." formats, lines 23-66),
// mapped to field errors by apiextensions-apiserver pkg/apiserver/validation/validation.go:165.
// Each expectation was also confirmed against kube-apiserver v1.37.2 by test/e2e/schema-parity.test.ts.

const TARGET: AdmitOptions = { namespace: 'default' };

function thing(spec: unknown, metadata: Record<string, unknown> = { name: 'a' }) {
  return { apiVersion: 'example.com/v1', kind: 'Thing', metadata, spec };
}

function run(specSchema: JSONSchemaProps, spec: unknown, options: Partial<AdmitOptions> = {}, subresources = {}) {
  const compiled = thingVersion({ type: 'object', properties: { spec: specSchema } }, { subresources });
  return admit(compiled, thing(spec), { ...TARGET, ...options });
}

function errorsOf(specSchema: JSONSchemaProps, spec: unknown): string[] {
  return run(specSchema, spec).errors.map(String);
}

const obj = (properties: Record<string, JSONSchemaProps>, extra: JSONSchemaProps = {}): JSONSchemaProps => ({
  type: 'object',
  properties,
  ...extra,
});

describe('schema engine: OpenAPI keywords', () => {
  it('type: the value type in a TypeInvalid error, typeFailWithData (schema.go:25)', () => {
    expect(errorsOf(obj({ n: { type: 'integer' } }), { n: 'x' })).to.deep.equal([
      'spec.n: Invalid value: "string": spec.n in body must be of type integer: "string"',
    ]);
    expect(errorsOf(obj({ n: { type: 'integer' } }), { n: 1.5 })[0]).to.equal(
      'spec.n: Invalid value: "number": spec.n in body must be of type integer: "number"',
    );
    expect(errorsOf(obj({ s: { type: 'string' } }), { s: [] })).to.deep.equal([
      'spec.s: Invalid value: "array": spec.s in body must be of type string: "array"',
    ]);
    expect(errorsOf(obj({ b: { type: 'boolean' } }), { b: {} })).to.deep.equal([
      'spec.b: Invalid value: "object": spec.b in body must be of type boolean: "object"',
    ]);
  });

  it('type: a number type accepts integers, an integer type rejects fractions with a range error too (values.go:380)', () => {
    expect(errorsOf(obj({ n: { type: 'number' } }), { n: 3 })).to.deep.equal([]);
    expect(errorsOf(obj({ n: { type: 'integer' } }), { n: 1.5 })).to.deep.equal([
      'spec.n: Invalid value: "number": spec.n in body must be of type integer: "number"',
      '<nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.n',
    ]);
  });

  it('format: int32 overflow and a wrong type against a format (type.go:160)', () => {
    expect(errorsOf(obj({ n: { type: 'integer', format: 'int32' } }), { n: 2147483648 })).to.deep.equal([
      '<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.n',
    ]);
    expect(errorsOf(obj({ when: { type: 'string', format: 'date-time' } }), { when: 5 })).to.deep.equal([
      'spec.when: Invalid value: "int64": spec.when in body must be of type date-time: "int64"',
    ]);
  });

  it('format: a string that is not in the format', () => {
    expect(errorsOf(obj({ when: { type: 'string', format: 'date-time' } }), { when: 'soon' })).to.deep.equal([
      'spec.when: Invalid value: "soon": spec.when in body must be of type date-time: "soon"',
    ]);
    expect(errorsOf(obj({ ip: { type: 'string', format: 'ipv4' } }), { ip: '1.2.3' })).to.deep.equal([
      'spec.ip: Invalid value: "1.2.3": spec.ip in body must be of type ipv4: "1.2.3"',
    ]);
  });

  it('format: unsupported formats are ignored (formats.go:93)', () => {
    expect(errorsOf(obj({ s: { type: 'string', format: 'made-up' } }), { s: 'x' })).to.deep.equal([]);
  });

  it('enum: Unsupported value with every supported value quoted', () => {
    expect(errorsOf(obj({ c: { type: 'string', enum: ['red', 'blue'] } }), { c: 'x' })).to.deep.equal([
      'spec.c: Unsupported value: "x": supported values: "red", "blue"',
    ]);
    expect(errorsOf(obj({ l: { type: 'integer', enum: [1, 2] } }), { l: 3 })).to.deep.equal([
      'spec.l: Unsupported value: 3: supported values: "1", "2"',
    ]);
  });

  it('enum: reflect conversion rules (an int matches a string enum as a rune, a fraction truncates)', () => {
    expect(errorsOf(obj({ c: { enum: ['a'] } }), { c: 97 })).to.deep.equal([]);
    expect(errorsOf(obj({ l: { enum: [2] } }), { l: 2.5 })).to.deep.equal([]);
  });

  it('enum: null on a nullable field is still checked', () => {
    expect(errorsOf(obj({ o: { type: 'string', nullable: true, enum: ['x'] } }), { o: null })).to.deep.equal([
      'spec.o: Unsupported value: null: supported values: "x"',
    ]);
  });

  it('minimum / maximum, inclusive and exclusive (schema.go:33-36)', () => {
    const s = obj({
      a: { type: 'integer', minimum: 1 },
      b: { type: 'integer', maximum: 10 },
      c: { type: 'number', minimum: 0, exclusiveMinimum: true },
      d: { type: 'number', maximum: 1, exclusiveMaximum: true },
    });
    expect(errorsOf(s, { a: 0, b: 11, c: 0, d: 1 })).to.deep.equal([
      'spec.a: Invalid value: 0: spec.a in body should be greater than or equal to 1',
      'spec.b: Invalid value: 11: spec.b in body should be less than or equal to 10',
      'spec.c: Invalid value: 0: spec.c in body should be greater than 0',
      'spec.d: Invalid value: 1: spec.d in body should be less than 1',
    ]);
  });

  it('maximum: a float value prints the bound with %v of a float64', () => {
    expect(errorsOf(obj({ h: { type: 'number', maximum: 1e7 } }), { h: 12345678.5 })).to.deep.equal([
      'spec.h: Invalid value: 1.23456785e+07: spec.h in body should be less than or equal to 1e+07',
    ]);
  });

  it('multipleOf: integer and float paths (values.go MultipleOfNativeType)', () => {
    expect(errorsOf(obj({ s: { type: 'integer', multipleOf: 5 } }), { s: 7 })).to.deep.equal([
      'spec.s: Invalid value: 7: spec.s in body should be a multiple of 5',
    ]);
    expect(errorsOf(obj({ f: { type: 'number', multipleOf: 0.25 } }), { f: 0.3 })).to.deep.equal([
      'spec.f: Invalid value: 0.3: spec.f in body should be a multiple of 0.25',
    ]);
    // an int64 value converts the factor with int64(), which truncates 0.25 to 0
    expect(errorsOf(obj({ f: { type: 'number', multipleOf: 0.25 } }), { f: 2 })).to.deep.equal([
      'spec.f: Invalid value: 0: factor MultipleOf declared for spec.f must be positive: 0',
    ]);
  });

  it('minLength / maxLength count runes; maxLength is a Too long error (schema.go:28-29)', () => {
    const s = obj({ s: { type: 'string', minLength: 2, maxLength: 3 } });
    expect(errorsOf(s, { s: 'a' })).to.deep.equal([
      'spec.s: Invalid value: "a": spec.s in body should be at least 2 chars long',
    ]);
    expect(errorsOf(s, { s: 'äöü' })).to.deep.equal([]);
    expect(errorsOf(s, { s: 'äöüß' })).to.deep.equal(['spec.s: Too long: may not be more than 3 bytes']);
  });

  it('pattern: Go RE2 syntax, message quotes the pattern (schema.go:30)', () => {
    const s = obj({
      code: { type: 'string', pattern: '^\\d{3}-[[:alpha:]]+$' },
      w: { type: 'string', pattern: '(?i)^hi\\s\\p{L}+$' },
    });
    expect(errorsOf(s, { code: '123-abc', w: 'HI wörld' })).to.deep.equal([]);
    expect(errorsOf(s, { code: '12-abc' })).to.deep.equal([
      'spec.code: Invalid value: "12-abc": spec.code in body should match \'^\\d{3}-[[:alpha:]]+$\'',
    ]);
  });

  it('minItems / maxItems / uniqueItems (schema.go:37-39)', () => {
    const s = obj({ l: { type: 'array', minItems: 2, maxItems: 3, uniqueItems: true, items: { type: 'integer' } } });
    expect(errorsOf(s, { l: [1] })).to.deep.equal([
      'spec.l: Invalid value: 1: spec.l in body should have at least 2 items',
    ]);
    expect(errorsOf(s, { l: [1, 2, 3, 4] })).to.deep.equal(['spec.l: Too many: 4: must have at most 3 items']);
    expect(errorsOf(s, { l: [1, 1] })).to.deep.equal([
      'spec.l: Invalid value: "": spec.l in body shouldn\'t contain duplicates',
    ]);
  });

  it('minProperties / maxProperties (schema.go:58-60)', () => {
    const s = obj({
      m: { type: 'object', minProperties: 1, maxProperties: 2, additionalProperties: { type: 'string' } },
    });
    expect(errorsOf(s, { m: {} })).to.deep.equal([
      'spec.m: Invalid value: 0: spec.m in body should have at least 1 properties',
    ]);
    expect(errorsOf(s, { m: { a: 'x', b: 'y', c: 'z' } })).to.deep.equal([
      'spec.m: Too many: 3: must have at most 2 items',
    ]);
  });

  it('additionalProperties values are validated under `<map>.<key>`', () => {
    const s = obj({ m: { type: 'object', additionalProperties: { type: 'string', maxLength: 1 } } });
    expect(errorsOf(s, { m: { 'a.b': 'xy' } })).to.deep.equal(['spec.m.a.b: Too long: may not be more than 1 byte']);
  });

  it('required: after the properties, in the order of `required`', () => {
    const s = obj({ a: { type: 'string' }, n: { type: 'integer', minimum: 1 } }, { required: ['b', 'a'] });
    expect(errorsOf(s, { n: 0 })).to.deep.equal([
      'spec.n: Invalid value: 0: spec.n in body should be greater than or equal to 1',
      'spec.b: Required value',
      'spec.a: Required value',
    ]);
  });

  it('nullable: null passes a nullable schema, otherwise the null is dropped before validation', () => {
    expect(errorsOf(obj({ s: { type: 'string', nullable: true } }), { s: null })).to.deep.equal([]);
    const result = run(obj({ s: { type: 'string' } }, { required: ['s'] }), { s: null });
    expect(result.errors.map(String)).to.deep.equal(['spec.s: Required value']);
  });

  it('x-kubernetes-int-or-string accepts both and names both types', () => {
    const s = obj({ p: { 'x-kubernetes-int-or-string': true } });
    expect(errorsOf(s, { p: 80 })).to.deep.equal([]);
    expect(errorsOf(s, { p: 'http' })).to.deep.equal([]);
    expect(errorsOf(s, { p: true })).to.deep.equal([
      'spec.p: Invalid value: "boolean": spec.p in body must be of type integer,string: "boolean"',
    ]);
  });

  it('anyOf / oneOf / allOf / not report with the quoted path (schema_messages.go:35-46)', () => {
    const s = obj({
      m: { type: 'string', anyOf: [{ enum: ['a'] }, { pattern: '^x-' }] },
      o: { type: 'integer', oneOf: [{ minimum: 10 }, { maximum: 5 }] },
      n: { type: 'string', not: { enum: ['no'] } },
    });
    expect(errorsOf(s, { m: 'c' })).to.deep.equal([
      '<nil>: Invalid value: "": "spec.m" must validate at least one schema (anyOf)',
      'spec.m: Unsupported value: "c": supported values: "a"',
    ]);
    expect(errorsOf(s, { o: 7 })[0]).to.equal(
      '<nil>: Invalid value: "": "spec.o" must validate one and only one schema (oneOf). Found none valid',
    );
    expect(errorsOf(s, { n: 'no' })).to.deep.equal([
      '<nil>: Invalid value: "": "spec.n" must not validate the schema (not)',
    ]);
  });
});

describe('schema engine: list types (listtype/validation.go)', () => {
  const s = obj({
    tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
    ports: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
    },
    routes: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['host', 'path'],
      items: { type: 'object', properties: { host: { type: 'string' }, path: { type: 'string', default: '/' } } },
    },
  });

  it('set: the second appearance of each repeated value is a duplicate', () => {
    expect(errorsOf(s, { tags: ['a', 'b', 'a', 'a', 'b'] })).to.deep.equal([
      'spec.tags[2]: Duplicate value: "a"',
      'spec.tags[4]: Duplicate value: "b"',
    ]);
  });

  it('map: duplicate keys, and items without the key count as the same key', () => {
    expect(
      errorsOf(s, {
        ports: [
          { name: 'a', port: 1 },
          { name: 'a', port: 2 },
        ],
      }),
    ).to.deep.equal(['spec.ports[1]: Duplicate value: {"name":"a"}']);
    expect(errorsOf(s, { ports: [{ port: 1 }, { port: 2 }] })).to.deep.equal(['spec.ports[1]: Duplicate value: {}']);
  });

  it('map with two keys compares after defaulting', () => {
    expect(errorsOf(s, { routes: [{ host: 'a' }, { host: 'a', path: '/' }] })).to.deep.equal([
      'spec.routes[1]: Duplicate value: {"host":"a","path":"/"}',
    ]);
  });

  it('map: a scalar item is rejected (listtype/validation.go:138)', () => {
    expect(errorsOf(s, { ports: [5] })).to.include(
      'spec.ports[0]: Invalid value: 5: must be an object for an array of list-type map',
    );
  });
});

describe('schema engine: metadata rules at the root', () => {
  const compiled = thingVersion({ type: 'object', properties: { spec: { type: 'object' } } });
  const meta = (metadata: Record<string, unknown>) => admit(compiled, thing({}, metadata), TARGET).errors.map(String);

  it('the name must be a DNS-1123 subdomain (apimachinery util/validation/validation.go:185)', () => {
    expect(meta({ name: 'Bad' })).to.deep.equal([
      "metadata.name: Invalid value: \"Bad\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]);
    expect(meta({ name: 'a'.repeat(254) })[0]).to.equal(
      `metadata.name: Invalid value: "${'a'.repeat(254)}": must be no more than 253 characters`,
    );
  });

  it('a name is required unless generateName is set (objectmeta.go:219)', () => {
    expect(meta({})).to.deep.equal(['metadata.name: Required value: name or generateName is required']);
    expect(meta({ generateName: 'site-' })).to.deep.equal([]);
  });

  it('label keys and values (content/kube.go)', () => {
    expect(meta({ name: 'a', labels: { app: '-x-' } })[0]).to.match(
      /^metadata\.labels: Invalid value: "-x-": a valid label must be/,
    );
  });

  it('a cluster-scoped object loses its namespace; a namespaced one needs one', () => {
    const clusterScoped = thingVersion(
      { type: 'object', properties: { spec: { type: 'object' } } },
      { namespaced: false },
    );
    const cluster = admit(clusterScoped, thing({}, { name: 'a', namespace: 'x' }), { namespace: undefined });
    expect(cluster.allowed).to.equal(true);
    expect((cluster.object as { metadata: object }).metadata).to.not.have.property('namespace');
    const namespaced = admit(compiled, thing({}, { name: 'a' }), { ...TARGET, namespace: undefined });
    expect(namespaced.errors.map(String)).to.deep.equal(['metadata.namespace: Required value']);
  });

  it('finalizer names without a domain produce warnings (customresource/validator.go:86)', () => {
    const result = admit(compiled, thing({}, { name: 'a', finalizers: ['cleanup'] }), TARGET);
    expect(result.warnings).to.deep.equal([
      'metadata.finalizers: "cleanup": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers',
    ]);
  });

  it('a metadata field of the wrong type fails decoding with a 400 (handlers/rest.go:252)', () => {
    const result = admit(compiled, thing({}, { name: 'a', labels: { x: 1 } }), TARGET);
    expect(result.code).to.equal(400);
    expect(result.message).to.equal(
      'Thing in version "v1" cannot be handled as a Thing: json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string',
    );
  });
});

describe('schema engine: field validation modes (handlers/create.go:119)', () => {
  const compiled = thingVersion({
    type: 'object',
    properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } },
  });
  const withUnknown = thing({ a: 'x', b: 1, c: 2 });
  const mode = (fieldValidation: FieldValidation) => admit(compiled, withUnknown, { ...TARGET, fieldValidation });

  it('Strict: a 400 strict decoding error listing every unknown field (runtime/error.go:140)', () => {
    const r = mode('Strict');
    expect(r.code).to.equal(400);
    expect(r.message).to.equal(
      'Thing in version "v1" cannot be handled as a Thing: strict decoding error: unknown field "spec.b", unknown field "spec.c"',
    );
  });

  it('Warn: allowed, one warning per pruned field', () => {
    const r = mode('Warn');
    expect(r.allowed).to.equal(true);
    expect(r.warnings).to.deep.equal(['unknown field "spec.b"', 'unknown field "spec.c"']);
    expect(r.object?.spec).to.deep.equal({ a: 'x' });
  });

  it('Ignore: allowed, silently pruned', () => {
    const r = mode('Ignore');
    expect(r.allowed).to.equal(true);
    expect(r.warnings).to.deep.equal([]);
    expect(r.object?.spec).to.deep.equal({ a: 'x' });
  });
});

describe('schema engine: CEL rules and the skip rule (strategy.go:216, hasBlockingErr at strategy.go:405)', () => {
  const withRule: JSONSchemaProps = obj(
    { n: { type: 'integer', minimum: 1 }, e: { type: 'string', enum: ['a'] } },
    {
      'x-kubernetes-validations': [
        { rule: 'self.n > 1' },
        { rule: '!has(oldSelf.n) || self.n >= oldSelf.n', message: 'n must not shrink' },
      ],
    },
  );
  const compiled = thingVersion({ type: 'object', properties: { spec: withRule } });

  it('runs the rules after defaulting and validation, and appends their errors last', () => {
    const r = admit(compiled, thing({ n: 0 }), TARGET);
    expect(r.errors.map(String)).to.deep.equal([
      'spec.n: Invalid value: 0: spec.n in body should be greater than or equal to 1',
      'spec: Invalid value: failed rule: self.n > 1',
    ]);
  });

  it('skips the rules after a blocking error and adds the note instead', () => {
    const r = admit(compiled, thing({ n: 0, e: 'b' }), TARGET);
    expect(r.errors.map(String)).to.deep.equal([
      'spec.n: Invalid value: 0: spec.n in body should be greater than or equal to 1',
      'spec.e: Unsupported value: "b": supported values: "a"',
      `<nil>: Invalid value: null: ${CEL_SKIPPED_DETAIL}`,
    ]);
  });

  it('transition rules see the old object on update, and are skipped on create', () => {
    expect(admit(compiled, thing({ n: 2 }), TARGET).allowed).to.equal(true);
    const r = admit(compiled, thing({ n: 2 }), { ...TARGET, oldObject: thing({ n: 3 }) });
    expect(r.errors.map(String)).to.deep.equal(['spec: Invalid value: n must not shrink']);
  });
});

describe('schema engine: subresources (customresource/strategy.go, validator.go:135)', () => {
  const subresources = {
    status: {},
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.ready' },
  };
  const compiled = thingVersion(
    {
      type: 'object',
      properties: { spec: obj({ replicas: { type: 'integer' } }), status: obj({ ready: { type: 'integer' } }) },
    },
    { subresources },
  );

  it('create drops status and sets generation 1', () => {
    const r = admit(compiled, { ...thing({ replicas: 1 }), status: { ready: 1 } }, TARGET);
    expect(r.object).to.not.have.property('status');
    expect(r.object?.metadata).to.deep.include({ generation: 1 });
  });

  it('the scale subresource checks the replica field', () => {
    const r = admit(compiled, thing({ replicas: -1 }), TARGET);
    expect(r.errors.map(String)).to.deep.equal(['.spec.replicas: Invalid value: -1: should be a non-negative integer']);
  });

  it('update keeps the old status and ratchets unchanged invalid values', () => {
    const strict = thingVersion(
      {
        type: 'object',
        properties: {
          spec: obj({ name: { type: 'string', maxLength: 2 }, n: { type: 'integer' } }),
          status: obj({ ready: { type: 'integer' } }),
        },
      },
      { subresources },
    );
    const old = { ...thing({ name: 'long', n: 1 }), status: { ready: 2 } };
    const unchanged = admit(strict, thing({ name: 'long', n: 2 }), { ...TARGET, oldObject: old });
    expect(unchanged.allowed).to.equal(true);
    expect(unchanged.object?.status).to.deep.equal({ ready: 2 });
    const changed = admit(strict, thing({ name: 'longer', n: 2 }), { ...TARGET, oldObject: old });
    expect(changed.errors.map(String)).to.deep.equal(['spec.name: Too long: may not be more than 2 bytes']);
  });
});

describe('schema: Go regexp translation corner cases', () => {
  it('a class that is only a negated POSIX class, and \\A / \\z that anchor the whole text even under (?m)', async () => {
    const { compileGoRegexp } = await import('../../crd/apimachinery/go-regexp.ts');
    // Go: regexp.MustCompile(`^[[:^alpha:]]+\z`).MatchString("123") == true, ("abc") == false.
    expect(compileGoRegexp('^[[:^alpha:]]+\\z').test('123')).to.equal(true);
    expect(compileGoRegexp('^[[:^alpha:]]+\\z').test('abc')).to.equal(false);
    // Go: `(?m)\Aa$` matches "a\nb" (\A is the text start), `(?m)b\z` does not match "b\nc".
    expect(compileGoRegexp('(?m)\\Aa$').test('a\nb')).to.equal(true);
    expect(compileGoRegexp('(?m)b\\z').test('b\nc')).to.equal(false);
  });
});
