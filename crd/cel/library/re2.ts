/**
 * RE2 (Go regexp) patterns -> JavaScript RegExp. Handles the RE2-only syntax that Kubernetes rules use:
 * leading inline flags `(?i)`, `(?s)`, `(?m)`, `(?U)` is rejected, `\z`, `\A`, POSIX classes `[[:alpha:]]`.
 * Compiled patterns are cached per cache object (one per environment).
 */
import { compileGoRegexp } from '../../apimachinery/go-regexp.ts';
import { CelFunctionError } from './errors.ts';

export type RegexCache = Map<string, RegExp | Error>;

/** The schema engine's Go-regexp translation, plus cel-go's refusal of the ungreedy flag. */
function translate(pattern: string): RegExp {
  const lead = /^\(\?([imsU]+)\)/.exec(pattern);
  if (lead?.[1]?.includes('U')) throw new Error('invalid or unsupported Perl syntax: `(?U`');
  return compileGoRegexp(pattern);
}

/** Compiles an RE2 pattern, throwing cel-go's error text when the pattern does not compile. */
export function compileRe2(cache: RegexCache, pattern: string, errorPrefix = 'Illegal regex: '): RegExp {
  let hit = cache.get(pattern);
  if (hit === undefined) {
    try {
      hit = translate(pattern);
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
