import { expect } from 'chai';
import type { JSONSchemaProps } from '../../api/index.ts';
import { admit } from '../../crd/index.ts';
import { applyDefaults, compileSchema, pruneUnknownFields } from '../../crd/schema/index.ts';
import { thingVersion } from '../support/thing-crd.ts';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        size: { type: 'integer', default: 3 },
        note: { type: 'string', nullable: true, default: 'n' },
        plain: { type: 'string' },
        nested: {
          type: 'object',
          properties: {
            inner: { type: 'string', default: 'in' },
            deeper: { type: 'object', properties: { x: { type: 'integer', default: 1 } } },
          },
        },
        withDefault: { type: 'object', default: {}, properties: { level: { type: 'integer', default: 2 } } },
        items: {
          type: 'array',
          items: { type: 'object', properties: { id: { type: 'string' }, w: { type: 'integer', default: 1 } } },
        },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        limits: {
          type: 'object',
          additionalProperties: { type: 'object', properties: { max: { type: 'integer', default: 5 } } },
        },
        free: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { typed: { type: 'object', properties: { a: { type: 'string' } } } },
        },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } },
        list: { type: 'array', items: { type: 'string', nullable: false, default: 'd' } },
      },
    },
  },
};
const compiled = compileSchema(schema);
const version = thingVersion(schema, { kind: 'K', group: 'g', version: 'v' });

describe('schema engine: pruning (pruning/algorithm.go)', () => {
  it('drops undeclared fields and reports their paths sorted, API-server style', () => {
    const obj = {
      apiVersion: 'v',
      kind: 'K',
      metadata: { name: 'n' },
      extra: 1,
      spec: { name: 'a', colour: 'red', items: [{ id: 'x', x: 1 }, { y: 2 }], nested: { z: true } },
    };
    const before = JSON.stringify(obj);
    const { value, unknown } = pruneUnknownFields(obj, compiled.root, { isResourceRoot: true });
    expect(unknown).to.deep.equal(['extra', 'spec.colour', 'spec.items[0].x', 'spec.items[1].y', 'spec.nested.z']);
    expect(JSON.stringify(obj)).to.equal(before);
    expect(value).to.deep.equal({
      apiVersion: 'v',
      kind: 'K',
      metadata: { name: 'n' },
      spec: { name: 'a', items: [{ id: 'x' }, {}], nested: {} },
    });
  });

  it('keeps every key of additionalProperties maps and prunes inside their values', () => {
    const obj = { spec: { labels: { a: 'x', 'b.c': 'y' }, limits: { one: { max: 1, junk: 2 } } } };
    const { value, unknown } = pruneUnknownFields(obj, compiled.root, { isResourceRoot: true });
    expect(unknown).to.deep.equal(['spec.limits.one.junk']);
    expect(value).to.deep.equal({ spec: { labels: { a: 'x', 'b.c': 'y' }, limits: { one: { max: 1 } } } });
  });

  it('stops at x-kubernetes-preserve-unknown-fields but still prunes declared properties below it', () => {
    const obj = { spec: { free: { anything: { deep: [1] }, typed: { a: 'x', b: 1 } } } };
    const { value, unknown } = pruneUnknownFields(obj, compiled.root, { isResourceRoot: true });
    expect(unknown).to.deep.equal(['spec.free.typed.b']);
    expect(value).to.deep.equal({ spec: { free: { anything: { deep: [1] }, typed: { a: 'x' } } } });
  });

  it('keeps apiVersion, kind and metadata of embedded resources, prunes the rest', () => {
    const obj = {
      spec: { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {}, status: {} } },
    };
    const { value, unknown } = pruneUnknownFields(obj, compiled.root, { isResourceRoot: true });
    expect(unknown).to.deep.equal(['spec.template.status']);
    expect(Object.keys((value as typeof obj).spec.template)).to.deep.equal(['apiVersion', 'kind', 'metadata', 'spec']);
  });

  it('with dropNulls, also drops nulls the schema neither allows nor defaults (prunenulls.go)', () => {
    const { value } = pruneUnknownFields({ spec: { plain: null, note: null, size: null } }, compiled.root, {
      isResourceRoot: true,
      dropNulls: true,
    });
    expect(value).to.deep.equal({ spec: { note: null, size: null } });
  });

  it('reports unknown metadata fields first through admit, as the decoder does', () => {
    const result = admit(
      version,
      { kind: 'K', apiVersion: 'g/v', metadata: { name: 'n', bogus: 1 }, spec: { q: 1 } },
      { namespace: 'default' },
    );
    // customresource_handler.go:1336 formats each path as `unknown field "%s"`
    expect(result.warnings).to.deep.equal(['unknown field "metadata.bogus"', 'unknown field "spec.q"']);
  });
});

describe('schema engine: defaulting (defaulting/algorithm.go)', () => {
  it('fills only objects that exist', () => {
    const obj: Record<string, unknown> = { spec: { nested: {} } };
    applyDefaults(obj, compiled.root);
    expect(obj).to.deep.equal({
      spec: { size: 3, note: 'n', nested: { inner: 'in' }, withDefault: { level: 2 } },
    });
  });

  it('a defaulted object receives its own nested defaults', () => {
    const obj: Record<string, unknown> = { spec: {} };
    applyDefaults(obj, compiled.root);
    expect((obj.spec as Record<string, unknown>).withDefault).to.deep.equal({ level: 2 });
  });

  it('replaces a non-nullable null by the default and keeps a nullable null', () => {
    const obj: Record<string, unknown> = { spec: { size: null, note: null, list: ['a', null] } };
    applyDefaults(obj, compiled.root);
    expect(obj.spec).to.include({ size: 3, note: null });
    expect((obj.spec as Record<string, unknown>).list).to.deep.equal(['a', 'd']);
  });

  it('defaults array items and map values', () => {
    const obj: Record<string, unknown> = { spec: { items: [{ id: 'a' }, { id: 'b', w: 4 }], limits: { x: {} } } };
    applyDefaults(obj, compiled.root);
    const spec = obj.spec as Record<string, unknown>;
    expect(spec.items).to.deep.equal([
      { id: 'a', w: 1 },
      { id: 'b', w: 4 },
    ]);
    expect(spec.limits).to.deep.equal({ x: { max: 5 } });
  });

  it('admit drops non-nullable nulls that have no default before defaulting (prunenulls.go)', () => {
    const result = admit(
      version,
      { kind: 'K', apiVersion: 'g/v', metadata: { name: 'n' }, spec: { plain: null, size: null } },
      { namespace: 'default' },
    );
    expect(result.allowed).to.equal(true);
    const spec = (result.object as { spec: Record<string, unknown> }).spec;
    expect(spec).to.not.have.property('plain');
    expect(spec.size).to.equal(3);
  });

  it('defaults are applied before validation: a default fills a required field', () => {
    const required = thingVersion(
      {
        type: 'object',
        properties: {
          spec: { type: 'object', required: ['mode'], properties: { mode: { type: 'string', default: 'auto' } } },
        },
      },
      { kind: 'K', group: 'g', version: 'v' },
    );
    const result = admit(
      required,
      { kind: 'K', apiVersion: 'g/v', metadata: { name: 'n' }, spec: {} },
      { namespace: 'default' },
    );
    expect(result.allowed).to.equal(true);
  });
});
