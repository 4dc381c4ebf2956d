import { expect } from 'chai';
import { readJsonDocument } from '../../cli/validate/json-document.ts';
import {
  INT64_MAX,
  INT64_MIN,
  int64OrFloat,
  mayHoldInexactIntegers,
  parseJsonInt64,
  stringifyJson,
} from '../../crd/json-int64.ts';
import { decide, siteDecisions } from '../../webhook/review/pipeline.ts';

/**
 * Expected values are sigs.k8s.io/json's (convertNumber: ParseInt, then ParseFloat) and what
 * kube-apiserver v1.37.2 stored for the same text (test/e2e/json-exact.test.ts asks it).
 */
describe('JSON read as the API server reads it: the pre-scan and the exact path', () => {
  describe('mayHoldInexactIntegers: a run of 16 digits', () => {
    it('is false for an ordinary review (numbers, a uid, timestamps, a resourceVersion)', () => {
      const review = JSON.stringify({
        uid: 'e26c0230-89bb-4331-9027-ace56be0fa8f',
        object: { metadata: { resourceVersion: '123456789', creationTimestamp: '2026-12-07T06:56:56Z' } },
        spec: { replicas: 3, ratio: 0.125, max: 9007199254740991 % 1e15 },
      });
      expect(mayHoldInexactIntegers(review)).to.equal(false);
      expect(mayHoldInexactIntegers('{"a":900719925474099}')).to.equal(false);
    });

    it('is true for 2^53 and beyond, signed or not, and for 16 digits inside a string (only the cost of the exact path)', () => {
      for (const text of ['{"a":9007199254740992}', '[-9223372036854775808]', '{"d":"sha256:1234567890123456"}'])
        expect(mayHoldInexactIntegers(text), text).to.equal(true);
    });

    it('finds a run of 16 at every offset and length of text, and no run of 15 (it samples every 16th character)', () => {
      for (let offset = 0; offset < 40; offset++) {
        const pad = 'x'.repeat(offset);
        expect(mayHoldInexactIntegers(`${pad}1234567890123456`), `16 at ${offset}`).to.equal(true);
        expect(mayHoldInexactIntegers(`${pad}1234567890123456${pad}`), `16 inside at ${offset}`).to.equal(true);
        expect(mayHoldInexactIntegers(`${pad}123456789012345,${pad}123456789012345`), `15 at ${offset}`).to.equal(
          false,
        );
      }
    });
  });

  describe('int64OrFloat', () => {
    it('keeps every int64 exact, as a number up to 2^53 and a BigInt beyond', () => {
      expect(int64OrFloat('9007199254740991')).to.equal(9007199254740991);
      expect(int64OrFloat('9007199254740993')).to.equal(9007199254740993n);
      expect(int64OrFloat('9223372036854775807')).to.equal(INT64_MAX);
      expect(int64OrFloat('-9223372036854775808')).to.equal(INT64_MIN);
    });

    it('reads an integer beyond int64 as a float64 (ParseInt fails, ParseFloat rounds)', () => {
      expect(int64OrFloat('9223372036854775808')).to.equal(2 ** 63);
      expect(int64OrFloat('-9223372036854775809')).to.equal(-(2 ** 63));
      expect(int64OrFloat('123456789012345678901234567890')).to.equal(1.2345678901234568e29);
    });
  });

  it('parseJsonInt64 and stringifyJson: the digits sent come back, the rest as JSON.parse and JSON.stringify', () => {
    const text =
      '{"a":9007199254740993,"b":[-9223372036854775808,9223372036854775807],"c":0.1,"d":9223372036854775808}';
    const value = parseJsonInt64(text) as { a: unknown; d: unknown };
    expect(value.a).to.equal(9007199254740993n);
    expect(stringifyJson(value)).to.equal(text.replace('9223372036854775808}', '9223372036854776000}'));
    expect(stringifyJson({ a: [1n], b: 2 }, 1)).to.equal('{\n "a": [\n  1\n ],\n "b": 2\n}');
    expect(() =>
      stringifyJson({
        toJSON: () => {
          throw new TypeError('other');
        },
      }),
    ).to.throw('other');
  });

  describe('readJsonDocument (staticsite validate reading a JSON document)', () => {
    const read = (text: string) => readJsonDocument(text, 100);

    it('reads what JSON.parse reads, with every int64 exact', () => {
      const text =
        '{"a":[1,-0,2.5e3,true,false,null,"x\\n\\u00e9"],"b":{},"c":[],"__proto__":1,"big":-9007199254740993}';
      const read1 = read(text);
      expect(read1?.value).to.deep.equal({ ...JSON.parse(text), big: -9007199254740993n });
      expect(Object.hasOwn(read1?.value as object, '__proto__')).to.equal(true);
      expect(read1?.duplicateFields).to.deep.equal([]);
    });

    it('writes a lone surrogate escape as U+FFFD (encoding/json unquote), keeps a pair', () => {
      expect(read('{"s":"a\\ud800b\\udc00c\\ud83d\\ude00","\\udfff":1}')?.value).to.deep.equal({
        s: 'a\uFFFDb\uFFFDc\u{1F600}',
        '\uFFFD': 1,
      });
    });

    it('keeps the last of a repeated key and names each path once, in the decoder order', () => {
      const doc = read(
        '{"spec":{"i":1,"i":2,"kept":{"a":1,"a":{"b":1,"b":2}},"kept":{"z":1},"l":[{"x":1,"x":2}],"i":3}}',
      );
      expect(doc?.value).to.deep.equal({ spec: { i: 3, kept: { z: 1 }, l: [{ x: 2 }] } });
      expect(doc?.duplicateFields).to.deep.equal([
        'spec.i',
        'spec.kept.a',
        'spec.kept.a.b',
        'spec.kept',
        'spec.l[0].x',
      ]);
    });

    it('names at most 100 repeated keys (sigs.k8s.io/json keeps 100 strict errors)', () => {
      const keys = Array.from({ length: 150 }, (_, i) => `"k${i}":1,"k${i}":2`).join(',');
      expect(read(`{${keys}}`)?.duplicateFields).to.have.length(100);
    });

    it('a number beyond float64 is the decoder error, the first one, with the literal as written', () => {
      const doc = read(`{"a":1E400,"b":-1e+999,"c":1e-400,"d":1${'0'.repeat(400)}}`);
      expect(doc?.numberError).to.equal('json: cannot unmarshal number 1E400 into Go value of type float64');
      expect(doc?.value).to.have.property('c', 0);
      expect(read(`[${'9'.repeat(400)}]`)?.numberError).to.equal(
        `json: cannot unmarshal number ${'9'.repeat(400)} into Go value of type float64`,
      );
    });

    it('is undefined for what is not exactly one JSON value (the YAML reader then names the problem)', () => {
      for (const text of [
        '{a: 1}',
        '{"a":1}{"b":2}',
        '{"a":01}',
        '{"a":"\t"}',
        '{"a":1,}',
        '{"a":.5}',
        '{"a":"\\x"}',
        '{"a"',
      ])
        expect(read(text), text).to.equal(undefined);
      expect(readJsonDocument('{"a":{"b":{}}}', 2)).to.equal(undefined);
      expect(read(' \n{"a":1}\n ')?.value).to.deep.equal({ a: 1 });
    });
  });

  it('the webhook names an exact integer where a string belongs in its refusals (found by the seeded fuzz suite: 500s)', () => {
    const decisions = siteDecisions({ baseDomain: 'sites.test' });
    const body = (text: string) => Buffer.from(text);
    const contentType = 'application/json';
    const admission = decide(decisions, {
      path: '/mutate',
      contentType,
      body: body('{"apiVersion":"admission.k8s.io/v1","kind":9007199254740993,"request":{}}'),
    });
    expect(admission).to.deep.equal({
      kind: 'failed',
      code: 400,
      message: 'expected kind "AdmissionReview", got 9007199254740993',
    });
    const conversion = decide(decisions, {
      path: '/convert',
      contentType,
      body: body(
        '{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u","desiredAPIVersion":"staticsite.dev/v1","objects":[{"kind":-9223372036854775808}]}}',
      ),
    });
    expect(conversion).to.have.property('kind', 'conversion');
    expect(conversion).to.have.property('failure').that.includes('unexpected kind -9223372036854775808');
  });
});
