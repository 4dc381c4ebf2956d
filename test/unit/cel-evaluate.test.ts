/**
 * Rule semantics at admission (evaluate): self per node, nulls skipped, transition rules, optionalOldSelf,
 * message/messageExpression/reason/fieldPath, ratcheting, cost limits. Expected texts: the API server's, from
 * k8s.io/apiextensions-apiserver@v0.37.2/pkg/apiserver/schema/cel/validation.go and observed from kube-apiserver
 * v1.37.2 by test/e2e/cel-parity.test.ts.
 */
import { expect } from 'chai';
import { staticSiteSchema } from '../../api/index.ts';
import type { JSONSchemaProps, ValidationRule } from '../../crd/apiextensions.ts';
import { aggregateMessage, compileRules, evaluate } from '../../crd/cel/index.ts';

function rules(x: JSONSchemaProps, ...r: ValidationRule[]) {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: { spec: { type: 'object', properties: { x: r.length ? { ...x, 'x-kubernetes-validations': r } : x } } },
  };
  const { compiled, errors } = compileRules(schema);
  expect(errors).to.deep.equal([]);
  return (value: unknown, old?: unknown) => {
    const result = evaluate(compiled, { spec: { x: value } }, old === undefined ? undefined : { spec: { x: old } });
    return { message: aggregateMessage(result.errors), warnings: result.warnings };
  };
}

const replicas: JSONSchemaProps = {
  type: 'object',
  properties: { replicas: { type: 'integer' }, name: { type: 'string', maxLength: 63 } },
};

describe('cel: evaluating rules like the API server', () => {
  it('StaticSite: prod needs 2 replicas, tier is immutable, hostname is a DNS subdomain', () => {
    const { compiled } = compileRules(staticSiteSchema('v1'));
    const site = (spec: Record<string, unknown>) => ({
      apiVersion: 'staticsite.dev/v1',
      kind: 'StaticSite',
      metadata: { name: 's' },
      spec,
    });
    const errors = (o: unknown, old?: unknown) => aggregateMessage(evaluate(compiled, o, old).errors);
    expect(errors(site({ content: 'x', tier: 'prod', replicas: 1 }))).to.equal(
      'spec: Invalid value: prod sites need at least 2 replicas',
    );
    expect(errors(site({ content: 'x', tier: 'prod', replicas: 2 }))).to.equal('');
    expect(
      errors(site({ content: 'x', tier: 'prod', replicas: 2 }), site({ content: 'x', tier: 'dev', replicas: 2 })),
    ).to.equal('spec.tier: Invalid value: "prod": tier is immutable');
    expect(errors(site({ content: 'x', tier: 'dev', replicas: 1, hostname: 'Bad_Host' }))).to.match(
      /^spec\.hostname: Invalid value: "Bad_Host": /,
    );
  });

  it('message: default "failed rule", trimmed message, messageExpression and its fallbacks', () => {
    expect(rules(replicas, { rule: 'self.replicas < 5' })({ replicas: 7 }).message).to.equal(
      'spec.x: Invalid value: failed rule: self.replicas < 5',
    );
    expect(
      rules(replicas, {
        rule: 'self.replicas < 5',
        messageExpression: "'%d replicas are too many'.format([self.replicas])",
      })({ replicas: 7 }).message,
    ).to.equal('spec.x: Invalid value: 7 replicas are too many');
    for (const messageExpression of ["''", "'a\\nb'", "self.name + '!'", `'${'x'.repeat(5200)}'`]) {
      expect(
        rules(replicas, { rule: 'self.replicas < 5', message: 'fallback', messageExpression })({ replicas: 7 }).message,
        messageExpression,
      ).to.equal('spec.x: Invalid value: fallback');
    }
    expect(rules({ type: 'integer' }, { rule: 'self >= 0', message: '  must be non-negative  ' })(-5).message).to.equal(
      'spec.x: Invalid value: -5: must be non-negative',
    );
  });

  it('reason and fieldPath', () => {
    const check = rules(replicas, {
      rule: 'self.replicas < 5',
      reason: 'FieldValueForbidden',
      message: 'forbidden here',
      fieldPath: '.replicas',
    });
    expect(check({ replicas: 7 }).message).to.equal('spec.x.replicas: Forbidden: forbidden here');
    expect(
      rules(replicas, { rule: 'self.replicas < 5', reason: 'FieldValueRequired', message: 'required here' })({
        replicas: 7,
      }).message,
    ).to.equal('spec.x: Required value: required here');
    expect(
      rules(replicas, { rule: 'self.replicas < 5', reason: 'FieldValueDuplicate', message: 'dup' })({ replicas: 7 })
        .message,
    ).to.equal('spec.x: Duplicate value');
    expect(
      rules({ type: 'string' }, { rule: "self == 'ok'", reason: 'FieldValueDuplicate' })('dup-value').message,
    ).to.equal('spec.x: Duplicate value: "dup-value"');
  });

  it('transition rules run only with an old value; optionalOldSelf makes oldSelf an optional', () => {
    const immutable = rules({ type: 'string' }, { rule: 'self == oldSelf', message: 'immutable' });
    expect(immutable('a').message).to.equal('');
    expect(immutable('b', 'a').message).to.equal('spec.x: Invalid value: "b": immutable');
    const first = rules(
      { type: 'string' },
      { rule: "oldSelf.hasValue() || self == 'first'", optionalOldSelf: true, message: 'must start first' },
    );
    expect(first('second').message).to.equal('spec.x: Invalid value: "second": must start first');
    expect(first('second', 'first').message).to.equal('');
  });

  it('null values are not validated', () => {
    expect(rules({ type: 'string', nullable: true }, { rule: "self == 'x'" })(null).message).to.equal('');
  });

  it('ratcheting: an unchanged failing value becomes a warning on update, a changed one an error', () => {
    const check = rules(replicas, { rule: 'self.replicas < 5', message: 'too many' });
    expect(check({ replicas: 7 }, { replicas: 7 })).to.deep.equal({
      message: '',
      warnings: ['spec.x: Invalid value: too many'],
    });
    expect(check({ replicas: 8 }, { replicas: 7 }).message).to.equal('spec.x: Invalid value: too many');
  });

  it('runtime errors read like cel-go', () => {
    expect(
      rules({ type: 'array', maxItems: 5, items: { type: 'integer' } }, { rule: 'self[5] == 1' })([1, 2]).message,
    ).to.equal('spec.x: Invalid value: "array": index out of bounds: 5 evaluating rule: self[5] == 1');
    expect(rules(replicas, { rule: 'self.name.size() > 0' })({ replicas: 1 }).message).to.equal(
      'spec.x: Invalid value: "object": no such key: name evaluating rule: self.name.size() > 0',
    );
  });

  it('the per-call cost limit and the per-object budget', () => {
    const list: JSONSchemaProps = { type: 'array', maxItems: 1000, items: { type: 'integer' } };
    expect(
      rules(list, { rule: 'self.all(x, self.all(y, x >= 0 && y >= 0))' })(Array.from({ length: 1000 }, (_, i) => i))
        .message,
    ).to.equal(
      'spec.x: Invalid value: "array": \'operation cancelled: actual cost limit exceeded\': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.all(y, x >= 0 && y >= 0))',
    );
    const many = Array.from({ length: 30 }, () => ({ rule: 'self.all(x, self.all(y, x + y >= 0))' }));
    const small: JSONSchemaProps = { type: 'array', maxItems: 300, items: { type: 'integer' } };
    expect(rules(small, ...many)(Array.from({ length: 300 }, (_, i) => i)).message).to.equal(
      'spec.x: Invalid value: "array": validation failed due to running out of cost budget, no further validation rules will be run',
    );
    expect(rules(small, ...many)(Array.from({ length: 20 }, (_, i) => i)).message).to.equal('');
  });
});
