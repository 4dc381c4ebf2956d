/**
 * The string formats CRD schemas validate (apiextensions-apiserver pkg/apiserver/validation/formats.go)
 * with the checks of kube-openapi's strfmt registry (pkg/validation/strfmt/default.go and friends).
 */

import { utf8Length } from '../apimachinery/go-format.ts';
import { compileGoRegexp, type GoRegexp } from '../apimachinery/go-regexp.ts';
import { parseStrfmtDuration } from '../apimachinery/strfmt-duration.ts';
import { isCidrSloppy, parseIpSloppy, parseIpStrict } from './ip.ts';
import { isEmail } from './mail-address.ts';
import { isRequestUri } from './request-uri.ts';

export type FormatCheck = (value: string) => boolean;

/** go-openapi's name normalisation: dashes do not count ("date-time" == "datetime"). */
export function normalizeFormatName(name: string): string {
  return name.replaceAll('-', '');
}

/**
 * Compiled on first use: its Unicode classes take re2js tens of milliseconds, which every process
 * importing the engine would otherwise pay at start-up (most schemas have no hostname format).
 */
const HOSTNAME_PATTERN =
  '^([a-zA-Z0-9\\p{S}\\p{L}]((-?[a-zA-Z0-9\\p{S}\\p{L}]{0,62})?)|([a-zA-Z0-9\\p{S}\\p{L}](([a-zA-Z0-9-\\p{S}\\p{L}]{0,61}[a-zA-Z0-9\\p{S}\\p{L}])?)(\\.)){1,}([a-zA-Z\\p{L}]){2,63})$';
let hostnameRegexp: GoRegexp | undefined;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const CREDIT_CARD =
  /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$/;
const ISBN10 = /^(?:[0-9]{9}X|[0-9]{10})$/;
const ISBN13 = /^(?:[0-9]{13})$/;
const HEX_COLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const OCTET = '(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])';
const GO_SPACES = '[\\t\\n\\f\\r ]*';
const RGB_COLOR = new RegExp(
  `^rgb\\(${GO_SPACES}${OCTET}${GO_SPACES},${GO_SPACES}${OCTET}${GO_SPACES},${GO_SPACES}${OCTET}${GO_SPACES}\\)$`,
);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const SSN = /^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME_OF_DAY = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/u;
const SHORT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LONG_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** strfmt.IsHostname (default.go). */
function isHostname(s: string): boolean {
  hostnameRegexp ??= compileGoRegexp(HOSTNAME_PATTERN);
  if (!hostnameRegexp.test(s) || utf8Length(s) > 255) return false;
  return s.split('.').every((part) => utf8Length(part) <= 63);
}

/** strfmt.IsDate: time.Parse("2006-01-02", s), which also checks the day against the month. */
function isDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day <= days;
}

/** strfmt.IsDateTime (time.go): a lowercased split on "t", a date, then a loosely checked time. */
function isDateTime(s: string): boolean {
  if (utf8Length(s) < 4) return false;
  const parts = s.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0] ?? '')) return false;
  const m = TIME_OF_DAY.exec(parts[1] ?? '');
  if (!m) return false;
  return (m[1] ?? '') <= '23' && (m[2] ?? '') <= '59' && (m[3] ?? '') <= '59';
}

/** strfmt.IsDuration. */
function isDuration(s: string): boolean {
  return 'nanos' in parseStrfmtDuration(s);
}

/** net.ParseMAC: 6, 8 or 20 octets as xx:xx.., xx-xx.. or xxxx.xxxx... */
function isMac(s: string): boolean {
  if (s.length < 14) return false;
  const hexPair = (i: number) => /^[0-9a-fA-F]{2}$/.test(s.slice(i, i + 2));
  if (s[2] === ':' || s[2] === '-') {
    if ((s.length + 1) % 3 !== 0) return false;
    const n = (s.length + 1) / 3;
    if (n !== 6 && n !== 8 && n !== 20) return false;
    for (let x = 0, i = 0; i < n; i++) {
      if (!hexPair(x)) return false;
      x += 3;
      if (i < n - 1 && s[x - 1] !== s[2]) return false;
    }
    return true;
  }
  if (s[4] === '.') {
    if ((s.length + 1) % 5 !== 0) return false;
    const n = (2 * (s.length + 1)) / 5;
    if (n !== 6 && n !== 8 && n !== 20) return false;
    for (let x = 0, i = 0; i < n; i += 2) {
      if (!hexPair(x) || !hexPair(x + 2)) return false;
      x += 5;
      if (i < n - 2 && s[x - 1] !== '.') return false;
    }
    return true;
  }
  return false;
}

function isCreditCard(s: string): boolean {
  const digits = s.replace(/[^0-9]+/g, '');
  if (!CREDIT_CARD.test(digits)) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let n = Number(digits[i]);
    if (double) {
      n *= 2;
      sum += n >= 10 ? (n % 10) + 1 : n;
    } else sum += n;
    double = !double;
  }
  return sum % 10 === 0;
}

function isIsbn(s: string, version: 10 | 13): boolean {
  const clean = s.replace(/[\t\n\f\r -]+/g, '');
  if (version === 10) {
    if (!ISBN10.test(clean)) return false;
    let checksum = 0;
    for (let i = 0; i < 9; i++) checksum += (i + 1) * Number(clean[i]);
    checksum += clean[9] === 'X' ? 100 : 10 * Number(clean[9]);
    return checksum % 11 === 0;
  }
  if (!ISBN13.test(clean)) return false;
  let checksum = 0;
  for (let i = 0; i < 12; i++) checksum += (i % 2 === 0 ? 1 : 3) * Number(clean[i]);
  return Number(clean[12]) - ((10 - (checksum % 10)) % 10) === 0;
}

/** The checks behind each supported format, keyed by normalised name (formats.go:33). */
const CHECKS: Record<string, FormatCheck> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: isRequestUri,
  email: isEmail,
  hostname: isHostname,
  ipv4: (s) => parseIpSloppy(s) !== 0 && s.includes('.'),
  ipv6: (s) => s.includes(':') && parseIpStrict(s),
  cidr: isCidrSloppy,
  mac: isMac,
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID3.test(s),
  uuid4: (s) => UUID4.test(s),
  uuid5: (s) => UUID5.test(s),
  isbn: (s) => isIsbn(s, 10) || isIsbn(s, 13),
  isbn10: (s) => isIsbn(s, 10),
  isbn13: (s) => isIsbn(s, 13),
  creditcard: isCreditCard,
  ssn: (s) => s.length === 11 && SSN.test(s),
  hexcolor: (s) => HEX_COLOR.test(s),
  rgbcolor: (s) => RGB_COLOR.test(s),
  byte: (s) => BASE64.test(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
  k8sshortname: (s) => s.length <= 63 && SHORT_NAME.test(s),
  k8slongname: (s) => s.length <= 253 && LONG_NAME.test(s),
};

/** The check for a format a CRD string schema keeps, or undefined when the API server ignores it. */
export function formatCheck(format: string): FormatCheck | undefined {
  return CHECKS[normalizeFormatName(format)];
}
