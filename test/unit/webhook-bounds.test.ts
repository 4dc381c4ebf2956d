import { expect } from 'chai';
import { recordWarnings } from '../../crd/index.ts';
import { boundMessage, MESSAGE_LIMIT } from '../../webhook/admission/bounds.ts';

describe('webhook: warnings as the API server records them (k8s.io/apiserver endpoints/filters/warning.go)', () => {
  // Test_recorder_AddWarning in warning_test.go (agents aside: the webhook sends texts only).
  it('drops empty, repeated and unencodable texts, keeps the order', () => {
    expect(recordWarnings([])).to.deep.equal([]);
    expect(recordWarnings([''])).to.deep.equal([]);
    expect(recordWarnings(['mytext', 'mytext'])).to.deep.equal(['mytext']);
    expect(recordWarnings(['mytext1', 'mytext2', 'mytext3'])).to.deep.equal(['mytext1', 'mytext2', 'mytext3']);
    expect(recordWarnings(['my\ntext'])).to.deep.equal([]);
  });

  // TestTruncation in warning_test.go, with its limits of 25 runes in total and 5 per item.
  it('past the total, cuts every warning to the item length and drops the rest once full', () => {
    const limits = { totalRunes: 25, itemRunes: 5 };
    const first = ['aaaaaaaaaa', 'aaaaaaaaaa', 'bb', 'ccc', 'Iñtërnâtiô'];
    expect(recordWarnings(first, limits)).to.deep.equal(['aaaaaaaaaa', 'bb', 'ccc', 'Iñtërnâtiô']);
    const all = [...first, 'e', 'ffffffffff', 'ffffffffff', 'gggggggggg', 'h'];
    expect(recordWarnings(all, limits)).to.deep.equal(['aaaaa', 'bb', 'ccc', 'Iñtër', 'e', 'fffff', 'ggggg']);
  });

  it('130,000 unknown-field warnings leave at most 4 KiB of runes plus one cut item', () => {
    const warnings = Array.from({ length: 130_000 }, (_, i) => `unknown field "spec.f${i}"`);
    const recorded = recordWarnings(warnings);
    expect(recorded.join('').length).to.be.below(4 * 1024 + 256);
    expect(recorded[0]).to.equal('unknown field "spec.f0"');
  });

  it('messages past the limit are cut and say how much was left out', () => {
    expect(boundMessage('short')).to.equal('short');
    const long = 'x'.repeat(MESSAGE_LIMIT + 10);
    expect(boundMessage(long)).to.equal(`${'x'.repeat(MESSAGE_LIMIT)}... (10 more characters)`);
  });
});
