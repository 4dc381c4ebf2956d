/**
 * blockTabRefusal: the tabs go-yaml v2 refuses in the block context, with its reasons. The verdicts are kubectl's
 * (test/e2e/validate-yaml.test.ts reads the same documents with the kubectl built with the control plane).
 */
import { expect } from 'chai';
import { blockTabRefusal } from '../../cli/validate/block-tabs.ts';

const CANNOT_START = 'found character that cannot start any token';

describe('validate: tabs go-yaml v2 refuses in the block context', () => {
  it('where a simple key may start: a line start, after `-`, `?` and an explicit key `:`', () => {
    expect(blockTabRefusal('x:\n\t\n  y: 1\n')).to.deep.equal({ position: 3, reason: CANNOT_START });
    expect(blockTabRefusal('x:\n  -\tb\n')).to.deep.equal({ position: 6, reason: CANNOT_START });
    expect(blockTabRefusal('x:\n  - - \ta\n')).to.deep.equal({ position: 9, reason: CANNOT_START });
    expect(blockTabRefusal('x:\n  - \t# c\n    a\n')).to.deep.equal({ position: 7, reason: CANNOT_START });
    expect(blockTabRefusal('? \ta\n: b\n')).to.deep.equal({ position: 2, reason: CANNOT_START });
    expect(blockTabRefusal('? a\n:\tb\n')).to.deep.equal({ position: 5, reason: CANNOT_START });
  });

  it('left of the indentation a plain scalar or a block scalar continues at', () => {
    expect(blockTabRefusal('x: 1\n\t# c\n')).to.deep.equal({
      position: 5,
      reason: 'found a tab character that violates indentation',
    });
    expect(blockTabRefusal('x:\n  y: >\n   \ta\n')).to.deep.equal({
      position: 13,
      reason: 'found a tab character where an indentation space is expected',
    });
  });

  it('taken: after a key, after a scalar, in comments, quoted and flow scalars, block scalar content', () => {
    for (const text of [
      'x:\tone\n',
      'x: one\t# c\n',
      "x: 'one'\t# c\n",
      'x: 1 \t\n',
      'x: 1\n  \t# c\n',
      '- y:\ta\n',
      'x: "a\tb"\n',
      'x: [a\tb, c]\n',
      'x: |\n  - \ta\n',
      '# a\tcomment\nx: 1\n',
    ])
      expect(blockTabRefusal(text), JSON.stringify(text)).to.equal(undefined);
  });
});
