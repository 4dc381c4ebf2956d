/**
 * RE2 (Go regexp) patterns -> JavaScript RegExp. Handles the RE2-only syntax that Kubernetes rules use:
 * leading inline flags `(?i)`, `(?s)`, `(?m)`, `(?U)` is rejected, `\z`, `\A`, POSIX classes `[[:alpha:]]`.
 * Compiled patterns are cached per cache object (one per environment).
 */
import { CelFunctionError } from './errors.ts';

const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

export type RegexCache = Map<string, RegExp | Error>;

function translate(pattern: string): { source: string; flags: string } {
  let flags = '';
  let source = pattern;
  const lead = /^\(\?([imsU]+)\)/.exec(source);
  if (lead) {
    const f = lead[1] ?? '';
    if (f.includes('U')) throw new Error('invalid or unsupported Perl syntax: `(?U`');
    flags = f.replace(/[^ims]/g, '');
    source = source.slice(lead[0].length);
  }
  source = source
    .replace(/\[\[:(\^?)([a-z]+):\]\]/g, (m, neg: string, name: string) => {
      const cls = POSIX[name];
      return cls ? `[${neg}${cls}]` : m;
    })
    .replace(/\[:([a-z]+):\]/g, (m, name: string) => POSIX[name] ?? m)
    .replace(/\\z/g, '$(?![\\s\\S])')
    .replace(/\\A/g, '^(?<![\\s\\S])');
  return { source, flags };
}

/** Compiles an RE2 pattern, throwing cel-go's error text when the pattern does not compile. */
export function compileRe2(cache: RegexCache, pattern: string, errorPrefix = 'Illegal regex: '): RegExp {
  let hit = cache.get(pattern);
  if (hit === undefined) {
    try {
      const { source, flags } = translate(pattern);
      try {
        hit = new RegExp(source, `${flags}u`);
      } catch {
        hit = new RegExp(source, flags);
      }
    } catch (error) {
      hit = error instanceof Error ? error : new Error(String(error));
    }
    cache.set(pattern, hit);
  }
  if (hit instanceof Error) throw new CelFunctionError(`${errorPrefix}${hit.message}`);
  return hit;
}

/** Whether the pattern compiles. */
export function isValidRe2(cache: RegexCache, pattern: string): boolean {
  try {
    compileRe2(cache, pattern);
    return true;
  } catch {
    return false;
  }
}
