import { expect } from 'chai';
import { escapePropertyName, unescapePropertyName } from '../../crd/cel/escape.ts';

// Cases from k8s.io/apiserver@v0.37.2/pkg/cel/escaping_test.go (TestEscaping, TestUnescapeMalformed, TestEscapingFuzz).
const ESCAPES: Array<[string, string]> = [
  ['a.a', 'a__dot__a'],
  ['a-a', 'a__dash__a'],
  ['a__a', 'a__underscores__a'],
  ['a.-/__a', 'a__dot____dash____slash____underscores__a'],
  ['a._a', 'a__dot___a'],
  ['a__.__a', 'a__underscores____dot____underscores__a'],
  ['a___a', 'a__underscores___a'],
  ['a____a', 'a__underscores____underscores__a'],
  ['a__dot__a', 'a__underscores__dot__underscores__a'],
  ['a__underscores__a', 'a__underscores__underscores__underscores__a'],
  ['true', '__true__'],
  ['false', '__false__'],
  ['null', '__null__'],
  ['in', '__in__'],
  ['namespace', '__namespace__'],
  ['return', '__return__'],
  ['void', '__void__'],
  ['while', '__while__'],
  ['abc', 'abc'],
  ['a_b', 'a_b'],
];

describe('cel: property name escaping', () => {
  it('escapes names as the API server does', () => {
    for (const [name, escaped] of ESCAPES) expect(escapePropertyName(name), name).to.equal(escaped);
  });

  it('round-trips every escaped name', () => {
    for (const [name, escaped] of ESCAPES) expect(unescapePropertyName(escaped), escaped).to.equal(name);
  });

  it('leaves names CEL cannot express unescapable (leading digit, other punctuation, empty)', () => {
    for (const name of ['1a', '', 'a:b', 'a@b', 'a b', 'ä']) expect(escapePropertyName(name), name).to.equal(undefined);
  });

  it('rejects malformed escapes', () => {
    for (const escaped of ['__unknown__', 'a__true__b'])
      expect(unescapePropertyName(escaped), escaped).to.equal(undefined);
  });
});
