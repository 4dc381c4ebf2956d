/**
 * Kubernetes format library: format.dns1123Label() ... format.named(name), <format>.validate(string).
 * Messages from k8s.io/apimachinery@v0.37.2/pkg/util/validation/validation.go and
 * pkg/api/validate/content/{dns,kube}.go; library from k8s.io/apiserver@v0.37.2/pkg/cel/library/format.go.
 */
import { type Environment, Optional } from '@marcbachmann/cel-js';
import {
  isDns1035Label,
  isDns1123Label,
  isDns1123Subdomain,
  isLabelValue,
  isQualifiedName,
} from '../../apimachinery/names.ts';
import { isValidDateTime } from '../common/timestamps.ts';
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

const UUID_RE = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

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
