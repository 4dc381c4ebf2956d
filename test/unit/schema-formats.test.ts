import { expect } from 'chai';
import { compileGoRegexp } from '../../crd/apimachinery/go-regexp.ts';
import { formatCheck } from '../../crd/schema/formats.ts';
import { FORMAT_SAMPLES } from '../fixtures/schema/format-samples.ts';

// Accept/reject tables follow the checks registered in kube-openapi pkg/validation/strfmt/default.go
// (and time.go, date.go, duration.go, kubernetes-extensions.go); the formats a CRD keeps are listed in
// apiextensions-apiserver pkg/apiserver/validation/formats.go:33. The e2e parity suite sends every
// sample to kube-apiserver v1.37.2 too (the Formatted CRD).

describe('schema engine: string formats', () => {
  for (const [format, { ok, bad }] of Object.entries(FORMAT_SAMPLES)) {
    it(`${format}: accepts ${ok.length} and rejects ${bad.length} samples`, () => {
      const check = formatCheck(format);
      expect(check, format).to.be.a('function');
      for (const s of ok) expect(check?.(s), `${format} ${JSON.stringify(s)}`).to.equal(true);
      for (const s of bad) expect(check?.(s), `${format} ${JSON.stringify(s)}`).to.equal(false);
    });
  }

  it('formats the API server does not support have no check', () => {
    expect(formatCheck('int32')).to.equal(undefined);
    expect(formatCheck('made-up')).to.equal(undefined);
  });
});

describe('schema engine: Go regular expressions', () => {
  it('translates RE2 features JavaScript spells differently', () => {
    expect(compileGoRegexp('^[[:alpha:]]+\\z').test('abc')).to.equal(true);
    expect(compileGoRegexp('(?i)^abc$').test('ABC')).to.equal(true);
    expect(compileGoRegexp('^\\pL+$').test('wörld')).to.equal(true);
    expect(compileGoRegexp('^\\p{Greek}+$').test('αβγ')).to.equal(true);
    expect(compileGoRegexp('^a{$').test('a{')).to.equal(true);
    expect(compileGoRegexp('^\\#\\:$').test('#:')).to.equal(true);
    expect(compileGoRegexp('^\\Qa.b\\E$').test('a.b')).to.equal(true);
    expect(compileGoRegexp('^\\Qa.b\\E$').test('axb')).to.equal(false);
  });

  it("keeps Go's ASCII-only \\s", () => {
    expect(compileGoRegexp('^\\s$').test(' ')).to.equal(true);
    expect(compileGoRegexp('^\\s$').test('\u00a0')).to.equal(false);
  });
});
