/**
 * OpenAPI -> CEL types and JSON -> CEL values (k8s.io/apiserver@v0.37.2/pkg/cel/common/schemas.go SchemaDeclType,
 * valuesunstructured.go), observed through expressions: typed `self` from a schema as `staticsite cel --schema` does.
 */
import { expect } from 'chai';
import type { JSONSchemaProps } from '../../crd/apiextensions.ts';
import { schemaDeclType } from '../../crd/cel/decl-types.ts';
import { compileRules, evaluateExpression } from '../../crd/cel/index.ts';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    count: { type: 'integer' },
    ratio: { type: 'number' },
    at: { type: 'string', format: 'date-time' },
    day: { type: 'string', format: 'date' },
    timeout: { type: 'string', format: 'duration' },
    data: { type: 'string', format: 'byte' },
    port: { 'x-kubernetes-int-or-string': true },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    items: { type: 'array', items: { type: 'integer' } },
    nested: { type: 'object', properties: { name: { type: 'string' } } },
    'my-field': { type: 'string' },
  },
};
const self = {
  count: 3,
  ratio: 2,
  at: '2024-01-15T10:00:00Z',
  day: '2024-01-15',
  timeout: '1m30s',
  data: 'aGVsbG8=',
  port: 8080,
  labels: { app: 'web' },
  items: [1, 2],
  nested: { name: 'n' },
  'my-field': 'x',
};
const value = (expr: string) => evaluateExpression(expr, { self, schema });

describe('cel: OpenAPI types become CEL types', () => {
  it('integer -> int (JSON numbers become BigInt), number -> double even for whole numbers', () => {
    expect(value('type(self.count) == int && self.count + 1 == 4')).to.deep.equal({ value: true });
    expect(value('type(self.ratio) == double && self.ratio == 2.0')).to.deep.equal({ value: true });
    expect(value('self.count / 2')).to.deep.equal({ value: 1 });
  });

  it('date-time and date -> timestamp, duration -> duration, byte -> bytes', () => {
    expect(value("self.at == timestamp('2024-01-15T10:00:00Z')")).to.deep.equal({ value: true });
    expect(value('type(self.day) == google.protobuf.Timestamp')).to.deep.equal({ value: true });
    expect(value("self.timeout == duration('90s')")).to.deep.equal({ value: true });
    expect(value("self.data == b'hello'")).to.deep.equal({ value: true });
  });

  it('int-or-string -> dyn, additionalProperties -> map, array -> list, properties -> object', () => {
    expect(value('self.port == 8080')).to.deep.equal({ value: true });
    expect(evaluateExpression("self.port == '50%'", { self: { port: '50%' }, schema })).to.deep.equal({ value: true });
    expect(value("self.labels['app'] == 'web' && self.labels.size() == 1")).to.deep.equal({ value: true });
    expect(value('self.items == [1, 2]')).to.deep.equal({ value: true });
    expect(value("self.nested.name == 'n'")).to.deep.equal({ value: true });
  });

  it('escapes property names (__dash__) and rejects undeclared fields at compile time', () => {
    expect(value("self.my__dash__field == 'x'")).to.deep.equal({ value: true });
    // cel-go checker/errors.go undefinedField
    expect(value('self.nope == 1')).to.deep.equal({
      error: "ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^",
    });
  });

  it('sizes: maxItems, maxLength x 4, request-size bounds (schemas.go)', () => {
    const decl = schemaDeclType(
      {
        type: 'object',
        properties: {
          a: { type: 'array', maxItems: 7, items: { type: 'string', maxLength: 10 } },
          b: { type: 'array', items: { type: 'integer' } },
        },
      },
      false,
    );
    expect(decl?.kind).to.equal('object');
    if (decl?.kind !== 'object') return;
    const a = decl.fields.get('a')?.type;
    expect(a?.maxElements).to.equal(7);
    expect(a?.kind === 'list' && a.elem.maxElements).to.equal(40);
    // estimateMaxArrayItemsFromMinSize: (3 MiB - 2) / (1 + 1)
    expect(decl.fields.get('b')?.type.maxElements).to.equal(Math.floor((3 * 1024 * 1024 - 2) / 2));
  });

  it('at a resource root only apiVersion, kind, metadata.name and metadata.generateName are visible', () => {
    const root = (rule: string): JSONSchemaProps => ({
      type: 'object',
      properties: { metadata: { type: 'object' }, spec: { type: 'object', properties: { x: { type: 'string' } } } },
      'x-kubernetes-validations': [{ rule }],
    });
    expect(
      compileRules(root("self.metadata.name.startsWith('a') && self.kind == 'K' && self.apiVersion != ''")).errors,
    ).to.deep.equal([]);
    const { errors } = compileRules(root('self.metadata.labels.size() > 0'));
    expect(errors.map((e) => e.detail)).to.deep.equal([
      "compilation failed: ERROR: <input>:1:14: undefined field 'labels'\n | self.metadata.labels.size() > 0\n | .............^",
    ]);
  });
});
