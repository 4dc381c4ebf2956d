/**
 * cel-go strings extension (version 2, what Kubernetes enables since 1.29): charAt, indexOf, lastIndexOf,
 * lowerAscii, upperAscii, replace, split, substring, trim, join, format, strings.quote.
 * @marcbachmann/cel-js ships some of these with JavaScript semantics (toLowerCase on non-ASCII letters, JS trim,
 * UTF-16 indices); the environment renames those calls to the `k8s_*` overloads registered here (see
 * OVERRIDDEN_STRING_FUNCTIONS in ../common/string-overrides.ts), which follow Go.
 * Source: github.com/google/cel-go@v0.29.2/ext/strings.go.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { SIMPLE_ESCAPES } from '../../apimachinery/go-format.ts';
import { CelFunctionError } from '../common/errors.ts';
import { formatString } from './string-format.ts';

const runes = (s: string) => Array.from(s);
const outOfRange = (i: bigint | number) => new CelFunctionError(`index out of range: ${i}`);

function indexOf(str: string, sub: string, offset: bigint): bigint {
  if (offset < 0n) throw outOfRange(offset);
  const r = runes(str);
  const off = Number(offset);
  if (sub === '') return off > r.length ? BigInt(r.length) : offset;
  const s = runes(sub);
  if (off >= r.length) return -1n;
  for (let i = off; i < r.length - (s.length - 1); i++) {
    if (s.every((c, j) => r[i + j] === c)) return BigInt(i);
  }
  return -1n;
}

function lastIndexOf(str: string, sub: string, offset?: bigint): bigint {
  const r = runes(str);
  if (offset === undefined) {
    if (sub === '') return BigInt(r.length);
    if (Buffer.byteLength(str) < Buffer.byteLength(sub)) return -1n;
    return lastIndexOf(str, sub, BigInt(r.length - 1));
  }
  if (offset < 0n) throw outOfRange(offset);
  let off = Number(offset);
  if (sub === '') return off > r.length ? BigInt(r.length) : offset;
  const s = runes(sub);
  if (off >= r.length) return -1n;
  if (off > r.length - s.length) off = r.length - s.length;
  for (let i = off; i >= 0; i--) if (s.every((c, j) => r[i + j] === c)) return BigInt(i);
  return -1n;
}

/** Applies f to ASCII characters only (cel-go lowerASCII/upperASCII). */
const asciiMap = (s: string, f: (c: string) => string) =>
  Array.from(s, (c) => ((c.codePointAt(0) ?? 0) < 0x80 ? f(c) : c)).join('');

/** unicode.IsSpace: '\t', '\n', '\v', '\f', '\r', ' ', U+0085, U+00A0 and the Unicode White_Space set. */
const GO_SPACE = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const TRIM = new RegExp(`^${GO_SPACE}+|${GO_SPACE}+$`, 'g');

/** Go strings.Replace with n (n < 0: all). */
function replaceN(str: string, old: string, repl: string, n: bigint): string {
  if (n === 0n || old === repl) return str;
  if (old === '') {
    const r = runes(str);
    const out: string[] = [];
    let count = 0n;
    for (let i = 0; i <= r.length; i++) {
      if (n < 0n || count < n) {
        out.push(repl);
        count++;
      }
      if (i < r.length) out.push(r[i] as string);
    }
    return out.join('');
  }
  let out = '';
  let rest = str;
  let count = 0n;
  for (;;) {
    const i = rest.indexOf(old);
    if (i < 0 || (n >= 0n && count >= n)) break;
    out += rest.slice(0, i) + repl;
    rest = rest.slice(i + old.length);
    count++;
  }
  return out + rest;
}

/** Go strings.SplitN (n < 0: all; n == 0: nil). */
function splitN(str: string, sep: string, n: bigint): string[] {
  if (n === 0n) return [];
  if (sep === '') {
    const r = runes(str);
    if (n < 0n || BigInt(r.length) <= n) return r;
    const k = Number(n);
    return [...r.slice(0, k - 1), r.slice(k - 1).join('')];
  }
  const parts = str.split(sep);
  if (n < 0n || BigInt(parts.length) <= n) return parts;
  const k = Number(n);
  return [...parts.slice(0, k - 1), parts.slice(k - 1).join(sep)];
}

function substring(str: string, start: bigint, end?: bigint): string {
  const r = runes(str);
  const l = BigInt(r.length);
  if (end === undefined) {
    if (start < 0n || start > l) throw outOfRange(start);
    return r.slice(Number(start)).join('');
  }
  if (start > end) throw new CelFunctionError(`invalid substring range. start: ${start}, end: ${end}`);
  if (start < 0n || start > l) throw outOfRange(start);
  if (end < 0n || end > l) throw outOfRange(end);
  return r.slice(Number(start), Number(end)).join('');
}

class StringsNamespace {}

export function registerStrings(env: Environment): void {
  env.registerFunction('string.k8s_charAt(int): string', (s: string, i: bigint) => {
    const r = runes(s);
    if (i < 0n || i > BigInt(r.length)) throw outOfRange(i);
    return r[Number(i)] ?? '';
  });
  env.registerFunction('string.k8s_indexOf(string): int', (s: string, sub: string) => indexOf(s, sub, 0n));
  env.registerFunction('string.k8s_indexOf(string, int): int', indexOf);
  env.registerFunction('string.k8s_lastIndexOf(string): int', (s: string, sub: string) => lastIndexOf(s, sub));
  env.registerFunction('string.k8s_lastIndexOf(string, int): int', lastIndexOf);
  env.registerFunction('string.k8s_lowerAscii(): string', (s: string) => asciiMap(s, (c) => c.toLowerCase()));
  env.registerFunction('string.k8s_upperAscii(): string', (s: string) => asciiMap(s, (c) => c.toUpperCase()));
  env.registerFunction('string.k8s_replace(string, string): string', (s: string, a: string, b: string) =>
    replaceN(s, a, b, -1n),
  );
  env.registerFunction('string.k8s_replace(string, string, int): string', replaceN);
  env.registerFunction('string.k8s_split(string): list<string>', (s: string, sep: string) => splitN(s, sep, -1n));
  env.registerFunction('string.k8s_split(string, int): list<string>', splitN);
  env.registerFunction('string.k8s_substring(int): string', (s: string, start: bigint) => substring(s, start));
  env.registerFunction('string.k8s_substring(int, int): string', substring);
  env.registerFunction('string.k8s_trim(): string', (s: string) => s.replace(TRIM, ''));
  env.registerFunction('string.k8s_format(list<dyn>): string', formatString);
  env.registerType('StringsNamespace', StringsNamespace);
  env.registerConstant('strings', 'StringsNamespace', new StringsNamespace());
  env.registerFunction('StringsNamespace.quote(string): string', (_: StringsNamespace, s: string) => {
    return `"${Array.from(s, (c) => SIMPLE_ESCAPES[c] ?? c).join('')}"`;
  });
}
