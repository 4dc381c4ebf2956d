import { expect } from 'chai';
import { goFloat, goJsonMarshal, goQuote } from '../../crd/apimachinery/go-format.ts';
import { aggregateMessage, FieldError, fieldErrors, invalidMessage, NIL_PATH } from '../../crd/index.ts';

// Expected strings follow k8s.io/apimachinery@v0.37.2/pkg/util/validation/field/errors.go
// (ErrorBody at errors.go:115, type texts at errors.go:225) unless a comment says otherwise.

describe('schema engine: field errors print as field.Error.Error() does', () => {
  it('Invalid prints ints and floats with %v, strings with %q, the rest as JSON', () => {
    expect(fieldErrors.invalid('spec.replicas', 0, 'too small').toString()).to.equal(
      'spec.replicas: Invalid value: 0: too small',
    );
    expect(fieldErrors.invalid('spec.x', 1.5, 'd').toString()).to.equal('spec.x: Invalid value: 1.5: d');
    // fmt %v of a float64 switches to exponent form at 1e+06 (strconv 'g', shortest)
    expect(fieldErrors.invalid('spec.x', 1234567.5, 'd').toString()).to.equal(
      'spec.x: Invalid value: 1.2345675e+06: d',
    );
    expect(fieldErrors.invalid('spec.x', 'a"b', 'd').toString()).to.equal('spec.x: Invalid value: "a\\"b": d');
    expect(fieldErrors.invalid('spec.x', { b: 1, a: '<' }, 'd').toString()).to.equal(
      'spec.x: Invalid value: {"a":"\\u003c","b":1}: d',
    );
    expect(fieldErrors.invalid('spec.x', true, 'd').toString()).to.equal('spec.x: Invalid value: true: d');
  });

  it('a nil path prints <nil> and a nil value prints null (strategy.go:408)', () => {
    const note = fieldErrors.invalid(NIL_PATH, null, 'some validation rules were not checked');
    expect(note.toString()).to.equal('<nil>: Invalid value: null: some validation rules were not checked');
  });

  it('Required, Forbidden and TooLong never print the value', () => {
    expect(fieldErrors.required('spec.content').toString()).to.equal('spec.content: Required value');
    expect(fieldErrors.required('metadata.name', 'name or generateName is required').toString()).to.equal(
      'metadata.name: Required value: name or generateName is required',
    );
    expect(fieldErrors.forbidden('metadata.namespace', 'not allowed on this type').toString()).to.equal(
      'metadata.namespace: Forbidden: not allowed on this type',
    );
    // errors.go:347: "may not be more than %d bytes", singular for 1
    expect(fieldErrors.tooLong('spec.content', 65536).toString()).to.equal(
      'spec.content: Too long: may not be more than 65536 bytes',
    );
    expect(fieldErrors.tooLong('spec.c', 1).toString()).to.equal('spec.c: Too long: may not be more than 1 byte');
  });

  it('NotSupported quotes every supported value, TooMany says items', () => {
    expect(fieldErrors.notSupported('spec.tier', 'qa', ['dev', 'prod']).toString()).to.equal(
      'spec.tier: Unsupported value: "qa": supported values: "dev", "prod"',
    );
    expect(fieldErrors.notSupported('spec.level', 4, ['1', '2']).toString()).to.equal(
      'spec.level: Unsupported value: 4: supported values: "1", "2"',
    );
    // errors.go:398
    expect(fieldErrors.tooMany('spec.items', 4, 3).toString()).to.equal(
      'spec.items: Too many: 4: must have at most 3 items',
    );
    expect(fieldErrors.tooMany('spec.items', 2, 1).toString()).to.equal(
      'spec.items: Too many: 2: must have at most 1 item',
    );
  });

  it('Duplicate prints the duplicated value', () => {
    expect(fieldErrors.duplicate('spec.tags[2]', 'a').toString()).to.equal('spec.tags[2]: Duplicate value: "a"');
    expect(fieldErrors.duplicate('spec.ports[1]', { name: 'a' }).toString()).to.equal(
      'spec.ports[1]: Duplicate value: {"name":"a"}',
    );
  });

  it('errorBody and toJSON give the status cause', () => {
    const e = new FieldError('FieldValueInvalid', 'spec.a', 1, 'bad');
    expect(e.errorBody()).to.equal('Invalid value: 1: bad');
    expect(e.toJSON()).to.deep.equal({ type: 'FieldValueInvalid', field: 'spec.a', message: 'Invalid value: 1: bad' });
  });
});

describe('schema engine: the 422 message (api/errors/errors.go:284, util/errors/errors.go:70)', () => {
  const a = fieldErrors.required('spec.content');
  const b = fieldErrors.invalid('spec.replicas', 0, 'spec.replicas in body should be greater than or equal to 1');

  it('one error is printed bare', () => {
    expect(invalidMessage('StaticSite.staticsite.dev', 'shop', [a])).to.equal(
      'StaticSite.staticsite.dev "shop" is invalid: spec.content: Required value',
    );
  });

  it('several errors are printed in brackets, in order', () => {
    expect(invalidMessage('StaticSite.staticsite.dev', 'shop', [b, a])).to.equal(
      'StaticSite.staticsite.dev "shop" is invalid: [spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1, spec.content: Required value]',
    );
  });

  it('duplicate messages appear once, and a single distinct message loses its brackets', () => {
    expect(aggregateMessage([a, a, b, a])).to.equal(`[${a}, ${b}]`);
    expect(aggregateMessage([a, a])).to.equal(String(a));
  });

  it('the name is quoted with %q', () => {
    expect(invalidMessage('X.g', 'a"b', [])).to.equal('X.g "a\\"b" is invalid');
  });
});

describe('schema engine: Go value printing', () => {
  it('goFloat follows strconv shortest %g (exponent below 1e-4 and from 1e6)', () => {
    expect(goFloat(0.5)).to.equal('0.5');
    expect(goFloat(123456)).to.equal('123456');
    expect(goFloat(1e6)).to.equal('1e+06');
    expect(goFloat(1e21)).to.equal('1e+21');
    expect(goFloat(0.0001)).to.equal('0.0001');
    expect(goFloat(0.00001)).to.equal('1e-05');
  });

  it('goQuote escapes like strconv.Quote', () => {
    expect(goQuote('a\nb\t"\\')).to.equal('"a\\nb\\t\\"\\\\"');
    expect(goQuote('é')).to.equal('"é"');
    expect(goQuote('\u0001')).to.equal('"\\x01"');
    expect(goQuote('\u00a0')).to.equal('"\\u00a0"');
    // encoding/json decodes a lone surrogate escape to U+FFFD, a printable rune strconv.Quote keeps.
    expect(goQuote('x\ud800y')).to.equal('"x\ufffdy"');
  });

  it('goJsonMarshal sorts keys and escapes HTML like encoding/json', () => {
    expect(goJsonMarshal({ b: [1, 'x'], a: null, c: '<&>' })).to.equal(
      '{"a":null,"b":[1,"x"],"c":"\\u003c\\u0026\\u003e"}',
    );
    // An integral number decodes to int64 and marshals as its exact digits; a fraction stays a float64.
    expect(goJsonMarshal({ a: 2 ** 60, b: [0.5, 1e21] })).to.equal('{"a":1152921504606846976,"b":[0.5,1e+21]}');
  });
});
