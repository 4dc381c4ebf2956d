/**
 * time.Parse(time.RFC3339, s) as metav1.Time.UnmarshalJSON calls it: the same acceptance and the
 * same *time.ParseError messages (Go's time/format.go: nextStdChunk, skip, getnum, ParseError.Error),
 * plus the UTC, whole-second form metav1.Time.MarshalJSON writes back.
 */

const RFC3339 = '2006-01-02T15:04:05Z07:00';

/** time's own quote(): ASCII printable as is, anything else as \x escapes of its UTF-8 bytes. */
function timeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp >= 0x80 || cp < 0x20) {
      for (const b of Buffer.from(ch, 'utf8')) out += `\\x${b.toString(16).padStart(2, '0')}`;
    } else {
      if (ch === '"' || ch === '\\') out += '\\';
      out += ch;
    }
  }
  return `${out}"`;
}

function parseError(value: string, layoutElem: string, valueElem: string, message = ''): string {
  if (message === '') {
    return `parsing time ${timeQuote(value)} as ${timeQuote(RFC3339)}: cannot parse ${timeQuote(valueElem)} as ${timeQuote(layoutElem)}`;
  }
  return `parsing time ${timeQuote(value)}${message}`;
}

const isDigit = (s: string, i: number) => i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57;

/** getnum: one or two digits (exactly two when fixed). */
function getnum(s: string, fixed: boolean): [number, string] | undefined {
  if (!isDigit(s, 0)) return undefined;
  if (!isDigit(s, 1)) return fixed ? undefined : [Number(s[0]), s.slice(1)];
  return [Number(s.slice(0, 2)), s.slice(2)];
}

type Element = { prefix: string; std: string };
const ELEMENTS: readonly Element[] = [
  { prefix: '', std: '2006' },
  { prefix: '-', std: '01' },
  { prefix: '-', std: '02' },
  { prefix: 'T', std: '15' },
  { prefix: ':', std: '04' },
  { prefix: ':', std: '05' },
  { prefix: '', std: 'Z07:00' },
];

export type TimeParse = { ok: true; utc: string } | { ok: false; error: string };

function daysIn(month: number, year: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const twoDigits = (s: string, at: number) => (s.charCodeAt(at) - 48) * 10 + (s.charCodeAt(at + 1) - 48);

/**
 * The form the API server itself writes (`2026-11-29T16:43:13Z`: UTC, whole seconds) is already what
 * parsing gives back, so a valid one is returned as it is; anything else, valid or not, takes the full
 * parse. Every object the API server sends carries a few of these (creationTimestamp, managedFields).
 */
function canonicalUtc(input: string): TimeParse | undefined {
  if (input.length !== 20 || !CANONICAL.test(input)) return undefined;
  const year = Number(input.slice(0, 4));
  const month = twoDigits(input, 5);
  const day = twoDigits(input, 8);
  const inRange =
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysIn(month, year) &&
    twoDigits(input, 11) < 24 &&
    twoDigits(input, 14) < 60 &&
    twoDigits(input, 17) < 60;
  return inRange ? { ok: true, utc: input } : undefined;
}

export function parseRfc3339(input: string): TimeParse {
  return canonicalUtc(input) ?? parseGeneral(input);
}

interface Fields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** Minutes east of UTC. */
  offset: number;
}

/** One element's parse: the text after it, and why it failed (a range error, or `bad`: it does not parse). */
interface ElementParse {
  rest: string;
  range: string;
  bad: boolean;
}

const unparsable = (rest: string): ElementParse => ({ rest, range: '', bad: true });

/** 01, 02, 15, 04, 05: the two-digit fields (the hour may have one digit), seconds with an ignored fraction. */
function parseTwoDigitElement(std: string, value: string, f: Fields): ElementParse {
  const n = getnum(value, std !== '15');
  if (!n) return unparsable(value);
  const v = n[0];
  let rest = n[1];
  let range = '';
  if (std === '01') {
    f.month = v;
    if (v <= 0 || v > 12) range = 'month';
  } else if (std === '02') f.day = v;
  else if (std === '15') {
    f.hour = v;
    if (v >= 24) range = 'hour';
  } else if (std === '04') {
    f.minute = v;
    if (v >= 60) range = 'minute';
  } else {
    f.second = v;
    if (v >= 60) range = 'second';
    if (rest.length >= 2 && (rest[0] === '.' || rest[0] === ',') && isDigit(rest, 1)) {
      let end = 2;
      while (isDigit(rest, end)) end++;
      rest = rest.slice(end);
    }
  }
  return { rest, range, bad: false };
}

/** Z07:00: `Z` or a ±hh:mm offset. */
function parseZone(value: string, f: Fields): ElementParse {
  if (value.startsWith('Z')) return { rest: value.slice(1), range: '', bad: false };
  if (value.length < 6 || value[3] !== ':') return unparsable(value);
  const hr = getnum(value.slice(1, 3), true);
  const mm = hr ? getnum(value.slice(4, 6), true) : undefined;
  const rest = value.slice(6);
  if (!hr || !mm || (value[0] !== '+' && value[0] !== '-')) return unparsable(rest);
  let range = '';
  if (hr[0] > 24) range = 'time zone offset hour';
  if (mm[0] > 60) range = 'time zone offset minute';
  f.offset = (value[0] === '-' ? -1 : 1) * (hr[0] * 60 + mm[0]);
  return { rest, range, bad: false };
}

function parseElement(std: string, value: string, f: Fields): ElementParse {
  if (std === '2006') {
    if (value.length < 4 || !isDigit(value, 0) || !/^\d{4}/.test(value)) return unparsable(value);
    f.year = Number(value.slice(0, 4));
    return { rest: value.slice(4), range: '', bad: false };
  }
  if (std === 'Z07:00') return parseZone(value, f);
  return parseTwoDigitElement(std, value, f);
}

function parseGeneral(input: string): TimeParse {
  let value = input;
  const f: Fields = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0, offset: 0 };
  for (const { prefix, std } of ELEMENTS) {
    for (const c of prefix) {
      if (value.length === 0 || value[0] !== c) return { ok: false, error: parseError(input, prefix, value) };
      value = value.slice(1);
    }
    const hold = value;
    const element = parseElement(std, value, f);
    value = element.rest;
    if (element.range !== '')
      return { ok: false, error: parseError(input, std, value, `: ${element.range} out of range`) };
    if (element.bad) return { ok: false, error: parseError(input, std, hold) };
  }
  if (value.length !== 0)
    return { ok: false, error: parseError(input, '', value, `: extra text: ${timeQuote(value)}`) };
  if (f.day < 1 || f.day > daysIn(f.month, f.year)) {
    return { ok: false, error: parseError(input, '', value, ': day out of range') };
  }
  const date = new Date(0);
  date.setUTCFullYear(f.year, f.month - 1, f.day);
  date.setUTCHours(f.hour, f.minute - f.offset, f.second, 0);
  return { ok: true, utc: `${date.toISOString().slice(0, 19)}Z` };
}
