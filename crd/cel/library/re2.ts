/**
 * RE2 patterns for the CEL regex functions, on the engine's Go regexp (linear time, Go's syntax and
 * errors), plus cel-go's refusal of the ungreedy flag. Compiled patterns are cached per cache object
 * (one per environment).
 */
import { compileGoRegexp, type GoRegexp } from '../../apimachinery/go-regexp.ts';
import { CelFunctionError } from '../common/errors.ts';

export type RegexCache = Map<string, GoRegexp | Error>;

function compile(pattern: string): GoRegexp {
  const lead = /^\(\?([imsU]+)\)/.exec(pattern);
  if (lead?.[1]?.includes('U')) throw new Error('error parsing regexp: invalid or unsupported Perl syntax: `(?U`');
  return compileGoRegexp(pattern);
}

/** Compiles an RE2 pattern, throwing `errorPrefix` + Go's error text when the pattern does not compile. */
export function compileRe2(cache: RegexCache, pattern: string, errorPrefix = 'Illegal regex: '): GoRegexp {
  let hit = cache.get(pattern);
  if (hit === undefined) {
    try {
      hit = compile(pattern);
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
