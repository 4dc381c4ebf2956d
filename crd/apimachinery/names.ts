/**
 * Kubernetes name and label rules with the API server's messages: k8s.io/apimachinery
 * pkg/util/validation/validation.go (IsDNS1123Subdomain, IsDNS1123Label, IsDNS1035Label: "characters")
 * and pkg/api/validate/content (IsLabelKey, IsLabelValue, path segments: "bytes").
 */
import { exceedsBytes } from './go-format.ts';

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const LABEL_KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;

const DNS1123_LABEL = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1035_LABEL = new RegExp(`^${DNS1035_LABEL_FMT}$`);
const LABEL_KEY = new RegExp(`^${LABEL_KEY_FMT}$`);
const LABEL_VALUE = new RegExp(`^${LABEL_VALUE_FMT}$`);

const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const LABEL_KEY_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** RegexError (validation.go:430). */
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

// The messages are constant: made once, not per value (a review may carry 100,000 labels).
const DNS1123_SUBDOMAIN_ERR = regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com');
const DNS1123_LABEL_ERR = regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc');
const DNS1035_LABEL_ERR = regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, 'my-name', 'abc-123');
const LABEL_KEY_ERR = regexError(LABEL_KEY_MSG, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc');
const LABEL_NAME_PART_ERR = `name part ${LABEL_KEY_ERR}`;
const LABEL_KEY_PARTS_ERR = `a valid label key ${LABEL_KEY_ERR} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`;
const LABEL_VALUE_ERR = regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345');

/** util/validation.IsDNS1123Subdomain. */
export function isDns1123Subdomain(value: string, unit: 'characters' | 'bytes' = 'characters'): string[] {
  const errs: string[] = [];
  if (exceedsBytes(value, 253)) errs.push(`must be no more than 253 ${unit}`);
  if (!DNS1123_SUBDOMAIN.test(value)) errs.push(DNS1123_SUBDOMAIN_ERR);
  return errs;
}

/** util/validation.IsDNS1123Label. */
export function isDns1123Label(value: string): string[] {
  const errs: string[] = [];
  if (exceedsBytes(value, 63)) errs.push('must be no more than 63 characters');
  if (!DNS1123_LABEL.test(value)) {
    if (DNS1123_SUBDOMAIN.test(value)) errs.push('must not contain dots');
    else errs.push(DNS1123_LABEL_ERR);
  }
  return errs;
}

/** At most 63 bytes (the message names `unit`), matching `pattern`: the two checks of several validators. */
function shortAndMatching(value: string, unit: string, pattern: RegExp, mismatch: string): string[] {
  const errs: string[] = [];
  if (exceedsBytes(value, 63)) errs.push(`must be no more than 63 ${unit}`);
  if (!pattern.test(value)) errs.push(mismatch);
  return errs;
}

/** util/validation.IsDNS1035Label. */
export function isDns1035Label(value: string): string[] {
  return shortAndMatching(value, 'characters', DNS1035_LABEL, DNS1035_LABEL_ERR);
}

/** content.IsLabelKey (IsQualifiedName). */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const slash = value.indexOf('/');
  let name = value;
  if (slash !== -1) {
    if (value.indexOf('/', slash + 1) !== -1) return [LABEL_KEY_PARTS_ERR];
    const prefix = value.slice(0, slash);
    name = value.slice(slash + 1);
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of isDns1123Subdomain(prefix, 'bytes')) errs.push(`prefix part ${m}`);
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (exceedsBytes(name, 63)) errs.push('name part must be no more than 63 bytes');
  if (!LABEL_KEY.test(name)) errs.push(LABEL_NAME_PART_ERR);
  return errs;
}

/** content.IsLabelValue. */
export function isLabelValue(value: string): string[] {
  return shortAndMatching(value, 'bytes', LABEL_VALUE, LABEL_VALUE_ERR);
}

/** api/validation.NameIsDNSSubdomain: a generateName prefix may end in a dash. */
export function nameIsDnsSubdomain(name: string, prefix: boolean): string[] {
  let value = name;
  if (prefix && value.length > 1 && value.endsWith('-')) value = `${value.slice(0, -2)}a`;
  return isDns1123Subdomain(value);
}

/** content.IsPathSegmentName / IsPathSegmentPrefix. */
export function pathSegmentName(name: string, prefix: boolean): string[] {
  if (!prefix && (name === '.' || name === '..')) return [`may not be '${name}'`];
  const errs: string[] = [];
  if (name.includes('/')) errs.push("may not contain '/'");
  if (name.includes('%')) errs.push("may not contain '%'");
  return errs;
}
