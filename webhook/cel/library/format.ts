/**
 * Kubernetes format library: format.dns1123Label() ... format.named(name), <format>.validate(string).
 * Messages from k8s.io/apimachinery@v0.37.2/pkg/util/validation/validation.go and
 * pkg/api/validate/content/{dns,kube}.go; library from k8s.io/apiserver@v0.37.2/pkg/cel/library/format.go.
 */
import { type Environment, Optional } from '@marcbachmann/cel-js';
import { isDns1035Label, isDns1123Label, isDns1123Subdomain } from '../../schema/names.ts';
import { isValidDateTime } from '../timestamps.ts';
import { parseRequestURI } from './urls.ts';

type Validate = (s: string) => string[];

export class NamedFormat {
  readonly name: string;
  readonly validate: Validate;
  constructor(name: string, validate: Validate) {
    this.name = name;
    this.validate = validate;
  }
  equals(other: unknown): boolean {
    return other instanceof NamedFormat && other.name === this.name;
  }
}

const KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const KEY_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const VALUE_FMT = `(${KEY_FMT})?`;
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

const full = (fmt: string) => new RegExp(`^${fmt}$`);
const KEY_RE = full(KEY_FMT);
const VALUE_RE = full(VALUE_FMT);
const UUID_RE = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

const byteLength = (s: string) => Buffer.byteLength(s, 'utf8');
const maxLenError = (n: number) => `must be no more than ${n} characters`;
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0] ?? '';
  else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...isDns1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a valid label key ${regexError(KEY_MSG, KEY_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (byteLength(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!KEY_RE.test(name)) errs.push(`name part ${regexError(KEY_MSG, KEY_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

export function isLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!VALUE_RE.test(value)) errs.push(regexError(VALUE_MSG, VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

/** maskTrailingDash in apimachinery/pkg/api/validation/generic.go (for the *Prefix formats). */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

function isDate(s: string): boolean {
  const m = DATE_RE.exec(s);
  if (!m) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.getUTCDate() === Number(m[3]);
}

export const CONSTANT_FORMATS: ReadonlyMap<string, NamedFormat> = new Map([
  ['dns1123Label', new NamedFormat('DNS1123Label', isDns1123Label)],
  ['dns1123Subdomain', new NamedFormat('DNS1123Subdomain', isDns1123Subdomain)],
  ['dns1035Label', new NamedFormat('DNS1035Label', isDns1035Label)],
  ['qualifiedName', new NamedFormat('QualifiedName', isQualifiedName)],
  ['dns1123LabelPrefix', new NamedFormat('DNS1123LabelPrefix', (s) => isDns1123Label(maskTrailingDash(s)))],
  ['dns1123SubdomainPrefix', new NamedFormat('DNS1123SubdomainPrefix', (s) => isDns1123Subdomain(maskTrailingDash(s)))],
  ['dns1035LabelPrefix', new NamedFormat('DNS1035LabelPrefix', (s) => isDns1035Label(maskTrailingDash(s)))],
  ['labelValue', new NamedFormat('LabelValue', isLabelValue)],
  [
    'uri',
    new NamedFormat('URI', (s) => {
      try {
        parseRequestURI(s);
        return [];
      } catch (error) {
        return [(error as Error).message];
      }
    }),
  ],
  ['uuid', new NamedFormat('uuid', (s) => (UUID_RE.test(s) ? [] : ['does not match the UUID format']))],
  ['byte', new NamedFormat('byte', (s) => (BASE64_RE.test(s) ? [] : ['invalid base64']))],
  ['date', new NamedFormat('date', (s) => (isDate(s) ? [] : ['invalid date']))],
  ['datetime', new NamedFormat('datetime', (s) => (isValidDateTime(s) ? [] : ['invalid datetime']))],
]);

class FormatNamespace {}

export function registerFormat(env: Environment): void {
  const F = 'kubernetes.NamedFormat';
  env.registerType(F, NamedFormat);
  env.registerType('FormatNamespace', FormatNamespace);
  env.registerConstant('format', 'FormatNamespace', new FormatNamespace());
  for (const [name, format] of CONSTANT_FORMATS) {
    env.registerFunction(`FormatNamespace.${name}(): ${F}`, () => format);
  }
  env.registerFunction(`FormatNamespace.named(string): optional<${F}>`, (_ns: FormatNamespace, name: string) => {
    const f = CONSTANT_FORMATS.get(name);
    return f ? Optional.of(f) : Optional.none();
  });
  env.registerFunction(`${F}.validate(string): optional<list<string>>`, (f: NamedFormat, s: string) => {
    const errs = f.validate(s);
    return errs.length === 0 ? Optional.none() : Optional.of(errs);
  });
}
