/**
 * Where @marcbachmann/cel-js 8.0.0 differs from cel-go as the API server configures it, and what our environment
 * does instead. Each case shows the library's own answer and ours; the expected values are cel-go's
 * (github.com/google/cel-go@v0.29.2/ext/strings.go, cel/validator.go) or the API server's, observed by
 * test/e2e/cel-parity.test.ts against kube-apiserver v1.37.2.
 */
import { Environment } from '@marcbachmann/cel-js';
import { expect } from 'chai';
import { evaluateExpression } from '../../crd/cel/index.ts';

function library(expr: string): unknown {
  try {
    const v = new Environment({ enableOptionalTypes: true }).evaluate(expr);
    return typeof v === 'bigint' ? Number(v) : v;
  } catch (error) {
    return `error: ${(error as Error).message.split('\n')[0]}`;
  }
}

describe('cel: workarounds for @marcbachmann/cel-js', () => {
  it('lowerAscii/upperAscii change only ASCII letters (the library lowercases Æ)', () => {
    expect(library("'TacoCÆt Xii'.lowerAscii()")).to.equal('tacocæt xii');
    expect(evaluateExpression("'TacoCÆt Xii'.lowerAscii()")).to.deep.equal({ value: 'tacocÆt xii' });
    expect(evaluateExpression("'TacoCæt Xii'.upperAscii()")).to.deep.equal({ value: 'TACOCæT XII' });
  });

  it('trim uses Go unicode.IsSpace: U+0085 is space, U+FEFF is not (JavaScript trim is the other way round)', () => {
    expect(library("'\u0085x\u0085'.trim()")).to.equal('\u0085x\u0085');
    expect(evaluateExpression("'\u0085x\u0085'.trim()")).to.deep.equal({ value: 'x' });
    expect(library("'\ufeffx'.trim()")).to.equal('x');
    expect(evaluateExpression("'\ufeffx'.trim()")).to.deep.equal({ value: '\ufeffx' });
  });

  it('matches() takes RE2 syntax such as (?i) flags (the library compiles JavaScript syntax)', () => {
    expect(library("'ABC'.matches('(?i)abc')")).to.equal('error: Invalid regular expression: (?i)abc');
    expect(evaluateExpression("'ABC'.matches('(?i)abc')")).to.deep.equal({ value: true });
    expect(evaluateExpression("'ab'.matches('^[[:alpha:]]+$')")).to.deep.equal({ value: true });
  });

  it('string indices count code points, as cel-go does (the library counts UTF-16 units)', () => {
    expect(library("'😀a'.indexOf('a')")).to.equal(2);
    expect(evaluateExpression("'😀a'.indexOf('a')")).to.deep.equal({ value: 1 });
    expect(library("'😀a'.substring(1)")).to.equal('\ude00a');
    expect(evaluateExpression("'😀a'.substring(1)")).to.deep.equal({ value: 'a' });
  });

  it('cel.bind is not part of the Kubernetes environment (the library enables it)', () => {
    expect(library('cel.bind(x, 1, x + 1)')).to.equal(2);
    // the API server's answer for the same rule (e2e parity corpus, compile-library case)
    expect(evaluateExpression('cel.bind(x, 1, x + 1) == 2')).to.deep.equal({
      error:
        "ERROR: <input>:1:1: undeclared reference to 'cel' (in container '')\n | cel.bind(x, 1, x + 1) == 2\n | ^\n" +
        "ERROR: <input>:1:9: undeclared reference to 'bind' (in container '')\n | cel.bind(x, 1, x + 1) == 2\n | ........^\n" +
        "ERROR: <input>:1:10: undeclared reference to 'x' (in container '')\n | cel.bind(x, 1, x + 1) == 2\n | .........^\n" +
        "ERROR: <input>:1:16: undeclared reference to 'x' (in container '')\n | cel.bind(x, 1, x + 1) == 2\n | ...............^",
    });
  });

  it('has() tests a field of any operand, as cel-go does (the library wants selects down to an identifier)', () => {
    expect(library('has([{"b": 1}][0].b)')).to.equal('error: has() invalid argument');
    // cel-go: a presence test of the last field, the operand evaluated (errors included); the same
    // shapes on typed objects are checked against the API server in the e2e parity corpus ("presence")
    expect(evaluateExpression('has([{"b": 1}][0].b)')).to.deep.equal({ value: true });
    expect(evaluateExpression('has([{"b": 1}][0].c)')).to.deep.equal({ value: false });
    expect(evaluateExpression('has({"k": {"b": 1}}["k"].b)')).to.deep.equal({ value: true });
    expect(evaluateExpression('has([{"b": {}}][0].b.c)')).to.deep.equal({ value: false });
    expect(evaluateExpression('has([{}][0].b.c)')).to.deep.equal({ error: 'no such key: b' });
  });

  it('list literals may mix types inside format() arguments only (cel-go exempts format from the homogeneity check)', () => {
    expect(evaluateExpression("'%s is %d'.format(['tom', 3])")).to.deep.equal({ value: 'tom is 3' });
    expect(evaluateExpression("[1, 'a'].size() == 2")).to.deep.equal({
      error: "ERROR: <input>:1:5: expected type 'int' but found 'string'\n | [1, 'a'].size() == 2\n | ....^",
    });
  });

  it('adds the functions the library lacks: charAt, replace, format, strings.quote and the Kubernetes libraries', () => {
    expect(library("'hello'.charAt(1)")).to.match(/^error: found no matching overload/);
    expect(evaluateExpression("'hello'.charAt(1)")).to.deep.equal({ value: 'e' });
    expect(evaluateExpression("quantity('1Gi').isGreaterThan(quantity('1G'))")).to.deep.equal({ value: true });
  });

  it('adds the standard overloads the library lacks and cel-go error texts for conversions', () => {
    expect(library("b'abc' < b'abd'")).to.match(/^error: no such overload: bytes < bytes/);
    expect(evaluateExpression("b'abc' < b'abd'")).to.deep.equal({ value: true });
    expect(
      evaluateExpression("timestamp(timestamp('2024-01-01T00:00:00Z')) == timestamp('2024-01-01T00:00:00Z')"),
    ).to.deep.equal({ value: true });
    // uint(-1): cel-go's text, as the API server reports it ("program instantiation failed: unsigned integer overflow")
    expect(evaluateExpression('uint(-1) == 1u')).to.deep.equal({ error: 'unsigned integer overflow' });
    // cel.ValidateDurationLiterals
    expect(evaluateExpression("duration('abc') > duration('1s')")).to.deep.equal({
      error: "ERROR: <input>:1:10: invalid duration argument\n | duration('abc') > duration('1s')\n | .........^",
    });
  });

  it('reports errors with cel-go wording and positions (the library has its own)', () => {
    expect(library("1 == 'a'")).to.match(/^error: no such overload: int == string/);
    expect(evaluateExpression("1 == 'a'")).to.deep.equal({
      error:
        "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, string)'\n | 1 == 'a'\n | ..^",
    });
  });
});
