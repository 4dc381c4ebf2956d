import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { RE2JS } from 're2js';
import { compileGoRegexp, GoRegexpError, KNOWN_SAFE_PATTERNS } from '../../crd/apimachinery/go-regexp.ts';

// Expected values: Go's own regexp package on each case (devenv/goregexp, run with the Go that
// builds the control plane): compile errors, MatchString, FindString, FindAllString(-1).
interface GoResult {
  pattern: string;
  text: string;
  error?: string;
  match: boolean;
  find: string | null;
  findAll: string[];
}
const results = JSON.parse(
  readFileSync(new URL('../fixtures/regexp/go-results.json', import.meta.url), 'utf8'),
) as GoResult[];

const show = (s: string) => JSON.stringify(s.length > 40 ? `${s.slice(0, 37)}...` : s);

describe("engine: Go regexps (RE2 syntax, linear time) against Go's regexp package", () => {
  for (const r of results) {
    it(`${show(r.pattern)} on ${show(r.text)}: ${r.error ?? `match ${r.match}, findAll ${r.findAll.length}`}`, () => {
      if (r.error !== undefined) {
        expect(() => compileGoRegexp(r.pattern)).to.throw(GoRegexpError, r.error);
        try {
          compileGoRegexp(r.pattern);
        } catch (error) {
          expect((error as Error).message).to.equal(r.error);
        }
        return;
      }
      const re = compileGoRegexp(r.pattern);
      expect(re.test(r.text), 'MatchString').to.equal(r.match);
      expect(re.find(r.text) ?? null, 'FindString').to.equal(r.find);
      expect(re.findAll(r.text, -1), 'FindAllString').to.deep.equal(r.findAll);
      expect(re.findAll(r.text, 1), 'FindAllString(1)').to.deep.equal(r.findAll.slice(0, 1));
    });
  }

  it('catastrophic patterns on 64-character inputs answer in under 10 ms', () => {
    const cases: Array<[string, string]> = [
      ['^(a+)+$', `${'a'.repeat(64)}!`],
      ['^(a|a)*$', `${'a'.repeat(64)}!`],
      ['(x+x+)+y', 'x'.repeat(64)],
      ['^(\\w+\\s?)*$', `${'a'.repeat(64)}!`],
    ];
    for (const [pattern, text] of cases) {
      const re = compileGoRegexp(pattern);
      re.test(text);
      const started = performance.now();
      expect(re.test(text)).to.equal(false);
      expect(performance.now() - started, pattern).to.be.below(10);
    }
  });

  it('the patterns kept on V8 compile in re2js too (so skipping it for them skips no error)', () => {
    for (const pattern of KNOWN_SAFE_PATTERNS) expect(() => RE2JS.compile(pattern), pattern).to.not.throw();
  });

  it('the patterns kept on V8 match as re2js does: 4,000 generated strings each (MatchString, FindString)', () => {
    // Strings near each pattern's language: its own characters, the separators and a few it refuses.
    const alphabet = [
      'a',
      'z',
      'Z',
      '0',
      '9',
      '-',
      '.',
      '_',
      '*',
      '/',
      ':',
      '%',
      'f',
      'G',
      '`',
      '!',
      '~',
      ' ',
      '\n',
      'é',
    ];
    let seed = 52;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed;
    };
    for (const pattern of KNOWN_SAFE_PATTERNS) {
      const v8 = compileGoRegexp(pattern);
      const re2 = RE2JS.compile(pattern);
      for (let i = 0; i < 4_000; i++) {
        let text = '';
        for (let n = next() % 14; n > 0; n--) text += alphabet[next() % alphabet.length];
        const m = re2.matcher(text);
        const found = m.find() ? (m.group() ?? '') : undefined;
        expect(v8.test(text), `${pattern} on ${show(text)}`).to.equal(found !== undefined);
        expect(v8.find(text), `${pattern} on ${show(text)}`).to.equal(found);
      }
    }
  });

  it('the patterns kept on V8 stay linear: 100,000 characters of adversarial input in well under a second', () => {
    const inputs = [
      `${'a'.repeat(100_000)}!`,
      `${'a.'.repeat(50_000)}!`,
      'a-'.repeat(50_000),
      `${'a.'.repeat(50_000)}/`,
      `${'A'.repeat(100_000)}:`,
      `*.${'a-'.repeat(50_000)}`,
      `${'%0'.repeat(50_000)}%`,
    ];
    for (const pattern of KNOWN_SAFE_PATTERNS) {
      const re = compileGoRegexp(pattern);
      for (const text of inputs) {
        const started = performance.now();
        re.test(text);
        expect(performance.now() - started, `${pattern} on ${show(text)}`).to.be.below(200);
      }
    }
  });
});
