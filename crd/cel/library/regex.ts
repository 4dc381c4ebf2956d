/**
 * Kubernetes regex library: find, findAll.
 * Source: k8s.io/apiserver@v0.37.2/pkg/cel/library/regex.go.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { compileRe2, type RegexCache } from './re2.ts';

function findAll(cache: RegexCache, s: string, pattern: string, limit: bigint): string[] {
  const re = compileRe2(cache, pattern);
  const n = limit < 0n ? -1 : limit > BigInt(s.length + 1) ? s.length + 1 : Number(limit);
  return re.findAll(s, n);
}

export function registerRegex(env: Environment, cache: RegexCache): void {
  // string.matches with RE2 syntax (the library's own uses JavaScript RegExp syntax; see OVERRIDDEN_STRING_FUNCTIONS)
  // cel-go's matches reports regexp.Compile's own error, which starts with "error parsing regexp: ".
  const matches = (s: string, pattern: string) => compileRe2(cache, pattern, '').test(s);
  env.registerFunction('string.k8s_matches(string): bool', matches);
  env.registerFunction('matches(string, string): bool', matches);
  env.registerFunction('string.find(string): string', (s: string, pattern: string) => {
    return compileRe2(cache, pattern).find(s) ?? '';
  });
  env.registerFunction('string.findAll(string): list<string>', (s: string, p: string) => findAll(cache, s, p, -1n));
  env.registerFunction('string.findAll(string, int): list<string>', (s: string, p: string, n: bigint) =>
    findAll(cache, s, p, n),
  );
}
