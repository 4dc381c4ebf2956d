/**
 * loadAllAsGoYaml: flow collections and quoted scalars continued at any column, as go-yaml v2 reads them. The
 * values are kubectl's (test/e2e/validate-yaml.test.ts compares the same documents with the kubectl built with
 * the control plane).
 */
import { expect } from 'chai';
import { YAMLException } from 'js-yaml';
import { loadAllAsGoYaml } from '../../cli/validate/flow-indentation.ts';

const read = (text: string) => loadAllAsGoYaml(text, {}).values;

describe('validate: YAML flow and quoted continuation lines at any column (go-yaml v2)', () => {
  it('quoted scalars continued left of their key', () => {
    expect(read('x:\n  b: "two\nlines"\n')).to.deep.equal([{ x: { b: 'two lines' } }]);
    expect(read("x:\n  - 'two\n lines'\n")).to.deep.equal([{ x: ['two lines'] }]);
    expect(read('x:\n  b: "two\n\n  lines\n"\n')).to.deep.equal([{ x: { b: 'two\nlines ' } }]);
  });

  it('flow collections continued at column 0 or after tabs, nested, with plain scalars across lines', () => {
    expect(read('x:\n  c: [1,\n2]\n')).to.deep.equal([{ x: { c: [1, 2] } }]);
    expect(read('x:\n  c: [a\nb, c]\n')).to.deep.equal([{ x: { c: ['a b', 'c'] } }]);
    expect(read('x:\n  y: {a: [1,\n2], b: "c\nd"}\n')).to.deep.equal([{ x: { y: { a: [1, 2], b: 'c d' } } }]);
    expect(read('x: {a:\t1}\n')).to.deep.equal([{ x: { a: 1 } }]);
    expect(read('x:\n  c:\t[a,\nb]\n')).to.deep.equal([{ x: { c: ['a', 'b'] } }]);
    expect(read('x: [a,\n\tb]\n')).to.deep.equal([{ x: ['a', 'b'] }]);
    expect(read('x: [\n]\n')).to.deep.equal([{ x: [] }]);
  });

  it('a document indicator at column 0 inside a quoted scalar: refused with go-yaml reason', () => {
    expect(() => read('x: "a\n...\n b"\n'))
      .to.throw(YAMLException)
      .with.property('reason', 'found unexpected document indicator');
    expect(read('x: "a\n...x\n b"\n')).to.deep.equal([{ x: 'a ...x b' }]);
  });

  it('block structure keeps its rules', () => {
    expect(() => read('x:\n  y:\n - a\n')).to.throw(YAMLException);
    expect(() => read('x:\n  y: one\n  two\n')).to.throw(YAMLException);
  });
});
