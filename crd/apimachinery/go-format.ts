/**
 * Go's ways of printing values, reproduced so that messages match the API server byte for byte.
 *
 * The API server decodes JSON numbers into int64 when the literal is integral and fits, and into
 * float64 otherwise (sigs.k8s.io/json). A JavaScript number cannot remember whether it was written
 * `1` or `1.0`, so an integral number inside the int64 range is treated as Go's int64, as kubectl
 * sends it (it writes a float64 1 as `1`). An int64 beyond 2^53 is a BigInt (crd/json-int64.ts).
 */

import { GoStruct } from './go-struct.ts';

const INT64_LIMIT = 2 ** 63;

/** Whether the API server would hold this number as an int64 (otherwise float64). */
export function isGoInt(n: number | bigint): boolean {
  if (typeof n === 'bigint') return true;
  // -2^63 itself is written -9223372036854776000 (shortest digits), which no int64 holds.
  return Number.isInteger(n) && n > -INT64_LIMIT && n < INT64_LIMIT;
}

/** strconv.FormatFloat(f, 'e', -1, 64): shortest digits, at least two exponent digits. */
function formatExponent(f: number): string {
  const [mantissa, exponent = '0'] = f.toExponential().split('e');
  const sign = exponent.startsWith('-') ? '-' : '+';
  const digits = exponent.replace(/^[+-]/, '');
  return `${mantissa}e${sign}${digits.length < 2 ? `0${digits}` : digits}`;
}

/** fmt's %v for a float64: strconv 'g' with the shortest digits, which switches to %e when the exponent is < -4 or >= 6. */
export function goFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Number.POSITIVE_INFINITY) return '+Inf';
  if (f === Number.NEGATIVE_INFINITY) return '-Inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  const exp = Number(f.toExponential().split('e')[1]);
  if (exp < -4 || exp >= 6) return formatExponent(f);
  return plainDecimal(f);
}

/** A finite number in positional notation with the shortest round-trip digits (strconv 'f', -1). */
export function plainDecimal(f: number): string {
  const s = String(f);
  if (!s.includes('e')) return s;
  const negative = f < 0;
  const [mantissa = '', expPart = '0'] = Math.abs(f).toExponential().split('e');
  const exp = Number(expPart);
  const digits = mantissa.replace('.', '');
  let out: string;
  if (exp >= 0) {
    out =
      digits.length - 1 <= exp
        ? digits + '0'.repeat(exp - (digits.length - 1))
        : `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  } else {
    out = `0.${'0'.repeat(-exp - 1)}${digits}`;
  }
  return negative ? `-${out}` : out;
}

/** fmt's %T for a decoded JSON value. */
export function goTypeName(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return isGoInt(value) ? 'int64' : 'float64';
  if (typeof value === 'bigint') return 'int64';
  if (Array.isArray(value)) return '[]interface {}';
  return 'map[string]interface {}';
}

/** The one-letter escapes Go's strconv.Quote uses. */
export const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '\u0007': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '\\': '\\\\',
  '"': '\\"',
};

/** strconv.Quote: printable runes stay as they are, the rest become Go escapes. */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A run of runes strconv.Quote keeps as they are: printable (IsPrint), and neither `"` nor `\\`. */
const PRINTABLE_RUN = String.raw`(?:(?!["\\])[\p{L}\p{M}\p{N}\p{P}\p{S} ])+`;

/**
 * strconv.Quote. Runs of printable runes are copied as slices, so a long string costs a few
 * pieces, not one per rune (a 6 MB name quoted rune by rune took more heap than the webhook has).
 */
/** goQuote(s).length, without making the quoted text when s needs no escape. */
export function goQuoteLength(s: string): number {
  return PLAIN_ASCII.test(s) ? s.length + 2 : goQuote(s).length;
}

export function goQuote(s: string): string {
  if (PLAIN_ASCII.test(s)) return `"${s}"`;
  const run = new RegExp(PRINTABLE_RUN, 'uy');
  const pieces: string[] = ['"'];
  let i = 0;
  while (i < s.length) {
    run.lastIndex = i;
    if (run.test(s)) {
      pieces.push(s.slice(i, run.lastIndex));
      i = run.lastIndex;
      continue;
    }
    const cp = s.codePointAt(i) ?? 0;
    const ch = String.fromCodePoint(cp);
    i += ch.length;
    const simple = SIMPLE_ESCAPES[ch];
    if (simple) pieces.push(simple);
    else if (cp < 0x80) pieces.push(`\\x${cp.toString(16).padStart(2, '0')}`);
    else if (cp >= 0xd800 && cp <= 0xdfff)
      pieces.push('\ufffd'); // Go decoded the lone surrogate to U+FFFD, which is printable
    else if (cp < 0x10000) pieces.push(`\\u${cp.toString(16).padStart(4, '0')}`);
    else pieces.push(`\\U${cp.toString(16).padStart(8, '0')}`);
  }
  pieces.push('"');
  return pieces.join('');
}

const JSON_HTML_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

function goJsonString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => JSON_HTML_ESCAPES[c] ?? c);
}

/** encoding/json.Marshal of a decoded JSON value: sorted map keys, HTML-safe strings. */
export function goJsonMarshal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goJsonString(value);
  // An integral number is Go's int64 (see above): its exact digits, where JSON.stringify would round 2**60.
  if (typeof value === 'number') return isGoInt(value) ? BigInt(value).toString() : JSON.stringify(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (Array.isArray(value)) return `[${value.map(goJsonMarshal).join(',')}]`;
  if (value instanceof GoStruct) {
    return `{${value.fields.map(([k, v]) => `${goJsonString(k)}:${goJsonMarshal(v)}`).join(',')}}`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort(compareGoStrings);
  return `{${keys.map((k) => `${goJsonString(k)}:${goJsonMarshal(record[k])}`).join(',')}}`;
}

/**
 * Go compares strings bytewise (UTF-8). Up to the first difference that equals UTF-16 code unit
 * order, except where a surrogate (an astral character) meets U+E000..U+FFFF: then compare bytes.
 */
export function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 || y >= 0xd800) return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
    return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : 1;
}

/** Whether the UTF-8 encoding is longer than `limit` bytes (cheap for short strings: at most 3 bytes a unit). */
export function exceedsBytes(s: string, limit: number): boolean {
  return s.length * 3 > limit && Buffer.byteLength(s, 'utf8') > limit;
}

/** Length in bytes of the UTF-8 encoding, what Go's len() returns for a string. */
export function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** utf8.RuneCountInString. */
export function runeCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}
