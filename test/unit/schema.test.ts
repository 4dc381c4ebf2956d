import { expect } from 'chai';
import { buildCrd, type JSONSchemaProps, SCHEMA_KEYWORDS, SERVED_VERSIONS, staticSiteSchema } from '../../api/index.ts';

interface Node {
  path: string;
  schema: JSONSchemaProps;
}

function* walk(schema: JSONSchemaProps, path = ''): Generator<Node> {
  yield { path, schema };
  for (const [name, child] of Object.entries(schema.properties ?? {})) yield* walk(child, `${path}.${name}`);
  if (schema.items) yield* walk(schema.items, `${path}[*]`);
  if (typeof schema.additionalProperties === 'object') yield* walk(schema.additionalProperties, `${path}{*}`);
}

function matchesType(value: unknown, type: JSONSchemaProps['type']): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return false;
  }
}

const schemas = SERVED_VERSIONS.flatMap((version) => [
  { name: version, schema: staticSiteSchema(version) },
  { name: `${version} without CEL`, schema: staticSiteSchema(version, { withoutCelRules: true }) },
]);

describe('api: the StaticSite OpenAPI schema', () => {
  for (const { name, schema } of schemas) {
    describe(name, () => {
      it('is structural: every node has a type and uses only CRD keywords', () => {
        for (const node of walk(schema)) {
          expect(node.schema.type, `type at "${node.path}"`).to.be.a('string');
          for (const key of Object.keys(node.schema)) {
            expect(SCHEMA_KEYWORDS.has(key), `keyword "${key}" at "${node.path}"`).to.equal(true);
          }
          expect(
            node.schema.properties !== undefined && node.schema.additionalProperties !== undefined,
            `properties and additionalProperties together at "${node.path}"`,
          ).to.equal(false);
          if (node.schema.type === 'array') expect(node.schema.items, `items at "${node.path}"`).to.be.an('object');
          for (const required of node.schema.required ?? []) {
            expect(node.schema.properties, `required "${required}" at "${node.path}"`).to.have.property(required);
          }
          if (node.schema['x-kubernetes-list-type'] === 'map') {
            for (const key of node.schema['x-kubernetes-list-map-keys'] ?? []) {
              expect(node.schema.items?.required, `list-map key "${key}" required at "${node.path}"`).to.include(key);
            }
          }
        }
      });

      it('declares only apiVersion, kind, metadata, spec and status at the root, with metadata untyped below', () => {
        expect(Object.keys(schema.properties ?? {}).sort()).to.deep.equal(
          ['apiVersion', 'kind', 'metadata', 'spec', 'status'].sort(),
        );
        expect(schema.properties?.metadata).to.deep.equal({ type: 'object' });
      });

      it('has defaults that satisfy their own schema node', () => {
        const withDefaults = [...walk(schema)].filter((n) => n.schema.default !== undefined);
        expect(withDefaults.map((n) => n.path)).to.include.members(['.spec.replicas', '.spec.tier']);
        for (const { path, schema: node } of withDefaults) {
          const value = node.default;
          expect(matchesType(value, node.type), `default type at ${path}`).to.equal(true);
          if (node.enum) expect(node.enum, `default enum at ${path}`).to.include(value);
          if (typeof value === 'number') {
            if (node.minimum !== undefined) expect(value, path).to.be.at.least(node.minimum);
            if (node.maximum !== undefined) expect(value, path).to.be.at.most(node.maximum);
          }
          if (typeof value === 'string') {
            if (node.minLength !== undefined) expect(value.length, path).to.be.at.least(node.minLength);
            if (node.maxLength !== undefined) expect(value.length, path).to.be.at.most(node.maxLength);
            if (node.pattern !== undefined) expect(value, path).to.match(new RegExp(node.pattern));
          }
        }
      });
    });
  }

  it('carries the three CEL rules from the design, and none in the webhook-only variant', () => {
    const rules = (s: JSONSchemaProps) => [...walk(s)].flatMap((n) => n.schema['x-kubernetes-validations'] ?? []);
    expect(rules(staticSiteSchema('v1')).map((r) => r.rule)).to.deep.equal([
      "self.tier != 'prod' || self.replicas >= 2",
      'self == oldSelf',
      String.raw`self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`,
    ]);
    expect(rules(staticSiteSchema('v1alpha1'))).to.have.length(2);
    expect(rules(staticSiteSchema('v1', { withoutCelRules: true }))).to.deep.equal([]);
  });

  it('keeps the CRD to CEL that Kubernetes 1.30 accepts: no format library, no newer extension calls', () => {
    const text = JSON.stringify(buildCrd());
    for (const newer of ['format.', '.ip(', 'cidr(', 'semver(', '.quantity(', 'sets.', 'strings.quote']) {
      expect(text, newer).not.to.include(newer);
    }
  });
});
