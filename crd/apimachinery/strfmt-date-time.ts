/**
 * The CEL value of a `format: date-time` or `format: date` string, as the API server reads it
 * (UnstructuredToVal): strfmt.ParseDateTime tries RFC 3339 with and without fractions and then
 * "2006-01-02T15:04:05" (no zone: UTC); time.Parse("2006-01-02") for a date. Go's time.Parse is stricter
 * than the format check (strfmt.IsDateTime accepts a lowercase `t` or `z`, and any character before a
 * fraction), so a string can pass OpenAPI validation and still be an error value in CEL, whose text is the
 * last layout's time.ParseError.
 * Sources: k8s.io/kube-openapi pkg/validation/strfmt/time.go; Go src/time/format.go (Parse, ParseError).
 */

export type ParsedTime = { time: Date } | { error: string };

const ISO8601_LOCAL_TIME = '2006-01-02T15:04:05';
const FULL_DATE = '2006-01-02';

/** Go's time.quote for the ASCII texts these are: the string in double quotes, `"` and `\` escaped. */
function quote(s: string): string {
  return JSON.stringify(s);
}

type Element = { std: '2006' | '01' | '02' | '15' | '04' | '05' } | { literal: string };

const LAYOUTS: Record<string, Element[]> = {
  [ISO8601_LOCAL_TIME]: [
    { std: '2006' },
    { literal: '-' },
    { std: '01' },
    { literal: '-' },
    { std: '02' },
    { literal: 'T' },
    { std: '15' },
    { literal: ':' },
    { std: '04' },
    { literal: ':' },
    { std: '05' },
  ],
  [FULL_DATE]: [{ std: '2006' }, { literal: '-' }, { std: '01' }, { literal: '-' }, { std: '02' }],
};

const isDigit = (s: string, i: number) => i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57;

/** getnum: one or two digits (exactly two when `fixed`). */
function getnum(s: string, fixed: boolean): [number, string] | undefined {
  if (!isDigit(s, 0)) return undefined;
  if (!isDigit(s, 1)) return fixed ? undefined : [Number(s[0]), s.slice(1)];
  return [Number(s.slice(0, 2)), s.slice(2)];
}

const RANGES: Record<string, [string, number, number]> = {
  '01': ['month', 1, 12],
  '02': ['day', 0, 31],
  '15': ['hour', 0, 23],
  '04': ['minute', 0, 59],
  '05': ['second', 0, 59],
};

function daysIn(month: number, year: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** time.Parse(layout, value) for the two layouts above: the UTC time, or Go's error text. */
function goParse(layout: string, value: string): ParsedTime {
  const fields: Record<string, number> = {};
  let rest = value;
  const cannotParse = (elem: string) => ({
    error: `parsing time ${quote(value)} as ${quote(layout)}: cannot parse ${quote(rest)} as ${quote(elem)}`,
  });
  for (const element of LAYOUTS[layout] ?? []) {
    if ('literal' in element) {
      if (!rest.startsWith(element.literal)) return cannotParse(element.literal);
      rest = rest.slice(element.literal.length);
      continue;
    }
    const { std } = element;
    let n: [number, string] | undefined;
    if (std === '2006') n = /^[0-9]{4}/.test(rest) ? [Number(rest.slice(0, 4)), rest.slice(4)] : undefined;
    else n = getnum(rest, std !== '15');
    if (!n) return cannotParse(std);
    [fields[std] as number, rest] = n;
    const range = RANGES[std];
    if (range && ((fields[std] as number) < range[1] || (fields[std] as number) > range[2])) {
      return { error: `parsing time ${quote(value)}: ${range[0]} out of range` };
    }
    // after the seconds, a fraction the layout does not name is read anyway
    if (std === '05' && rest.length >= 2 && (rest[0] === '.' || rest[0] === ',') && isDigit(rest, 1)) {
      let end = 2;
      while (isDigit(rest, end)) end++;
      fields.nanos = Number(`0.${rest.slice(1, end)}`);
      rest = rest.slice(end);
    }
  }
  if (rest.length > 0) return { error: `parsing time ${quote(value)}: extra text: ${quote(rest)}` };
  const year = fields['2006'] ?? 0;
  const month = fields['01'] ?? 1;
  const day = fields['02'] ?? 1;
  if (day < 1 || day > daysIn(month, year)) return { error: `parsing time ${quote(value)}: day out of range` };
  const ms = Math.floor((fields.nanos ?? 0) * 1000);
  return {
    time: new Date(Date.UTC(year, month - 1, day, fields['15'] ?? 0, fields['04'] ?? 0, fields['05'] ?? 0, ms)),
  };
}

/** RFC 3339 as Go's time.RFC3339 layouts read it: an upper-case T, a fraction, Z or a numeric offset. */
const RFC3339 = /^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})([.,][0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$/;

/** strfmt.ParseDateTime. */
export function parseStrfmtDateTime(value: string): ParsedTime {
  if (value === '') return { time: new Date(0) };
  const m = RFC3339.exec(value);
  if (m) {
    const local = goParse(ISO8601_LOCAL_TIME, m[1] ?? '');
    if ('error' in local) return goParse(ISO8601_LOCAL_TIME, value);
    const zone = m[3] === 'Z' ? 'Z' : (m[3] ?? 'Z');
    return { time: new Date(`${m[1]}${(m[2] ?? '').replace(',', '.')}${zone}`) };
  }
  return goParse(ISO8601_LOCAL_TIME, value);
}

/** time.Parse("2006-01-02", value), the CEL value of a `format: date` string. */
export function parseFullDate(value: string): ParsedTime {
  return goParse(FULL_DATE, value);
}
