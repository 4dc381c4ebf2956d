import {
  binaryTag,
  defineScalarTag,
  FAILSAFE_SCHEMA,
  mapTag,
  mergeTag,
  NOT_RESOLVED,
  type ScalarTagDefinition,
  Schema,
} from 'js-yaml';
import { INT64_MAX, INT64_MIN } from '../../crd/json-int64.ts';
import { recordingMapTag } from './yaml-mappings.ts';

/**
 * Plain YAML scalars resolved as kubectl resolves them. kubectl turns YAML into JSON with
 * sigs.k8s.io/yaml, which decodes with go-yaml v2 (a YAML 1.1 reading) and marshals the result with
 * encoding/json; this module gives the value that JSON holds. What that means, from go-yaml v2's
 * resolve.go and Go's strconv and time packages (see docs/validate-yaml.md):
 * - y, yes, on, true (three spellings each) and their opposites are booleans; "", ~, null are null;
 * - integers: underscores dropped, then Go's ParseInt with base 0 (0x, 0o, 0b, a leading 0 for
 *   octal), then ParseUint; floats match go-yaml's float pattern (1e3 and 08 are floats, 1:20 is not
 *   a number: YAML 1.1's base 60 is left out on purpose);
 * - dates and date-times stay the text they are: go-yaml reads them as time.Time, and
 *   sigs.k8s.io/yaml writes them back as written;
 * - .inf and .nan parse, but JSON cannot hold them, so they are an error as in kubectl.
 */

type Resolved =
  | { kind: 'null'; value: null }
  | { kind: 'bool'; value: boolean }
  | { kind: 'int'; value: number | bigint }
  | { kind: 'float'; value: number }
  | { kind: 'str' };

const TABLE = new Map<string, Resolved>();
for (const [words, resolved] of [
  ['y Y yes Yes YES true True TRUE on On ON', { kind: 'bool', value: true }],
  ['n N no No NO false False FALSE off Off OFF', { kind: 'bool', value: false }],
  ['~ null Null NULL', { kind: 'null', value: null }],
  ['.nan .NaN .NAN', { kind: 'float', value: Number.NaN }],
  ['.inf .Inf .INF +.inf +.Inf +.INF', { kind: 'float', value: Number.POSITIVE_INFINITY }],
  ['-.inf -.Inf -.INF', { kind: 'float', value: Number.NEGATIVE_INFINITY }],
] as const) {
  for (const word of words.split(' ')) TABLE.set(word, resolved);
}
TABLE.set('', { kind: 'null', value: null });

const STR: Resolved = { kind: 'str' };
const GO_INT = /^[+-]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/;
const GO_YAML_FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
/** A decimal that a double holds exactly, the common case, read without BigInt. */
const SMALL_DECIMAL = /^[+-]?[1-9][0-9]{0,14}$/;
const UINT64_MAX = 2n ** 64n - 1n;

/**
 * Go's strconv.ParseInt(text, 0, 64), falling back to ParseUint as go-yaml does; undefined if neither.
 * An int64 a number cannot hold is a BigInt (crd/json-int64.ts); a uint64 beyond int64 is written by
 * kubectl with its digits, which the API server reads as a float64, a number here.
 */
function goInteger(text: string): number | bigint | undefined {
  if (SMALL_DECIMAL.test(text)) return Number(text);
  if (!GO_INT.test(text)) return undefined;
  const negative = text.startsWith('-');
  const digits = text.replace(/^[+-]/, '');
  // BigInt reads 0x, 0o and 0b; a bare leading 0 means octal in Go.
  const magnitude = BigInt(/^0[0-7]+$/.test(digits) ? `0o${digits.slice(1)}` : digits);
  const value = negative ? -magnitude : magnitude;
  if (value < INT64_MIN) return undefined;
  if (value > UINT64_MAX || (text.startsWith('+') && value >= 2n ** 63n)) return undefined; // ParseUint takes no sign
  return value > INT64_MAX || Number.isSafeInteger(Number(value)) ? Number(value) : value;
}

/** Go's strconv.ParseFloat for a text of go-yaml's float pattern: out of range is not a float. */
function goFloat(text: string): number | undefined {
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/** go-yaml v2's resolve() for a plain scalar without a tag. */
export function resolvePlainScalar(source: string): Resolved {
  const tabled = TABLE.get(source);
  let resolved: Resolved = tabled ?? STR;
  const first = source.charAt(0);
  if (!tabled && first === '.') {
    const value = /^\.[0-9]+(?:[eE][-+]?[0-9]+)?$/.test(source) ? goFloat(source) : undefined;
    if (value !== undefined) resolved = { kind: 'float', value };
  } else if (!tabled && (first === '+' || first === '-' || (first >= '0' && first <= '9'))) {
    const plain = source.replaceAll('_', '');
    const integer = goInteger(plain);
    const float = integer === undefined && GO_YAML_FLOAT.test(plain) ? goFloat(plain) : undefined;
    if (integer !== undefined) resolved = { kind: 'int', value: integer };
    else if (float !== undefined) resolved = { kind: 'float', value: float };
  }
  return resolved;
}

/** What encoding/json says of a number JSON cannot hold (kubectl prints it after its own prefix). */
export class UnsupportedValueError extends Error {
  override name = 'UnsupportedValueError';
}

function jsonNumber(value: number): number {
  if (Number.isFinite(value)) return value;
  throw new UnsupportedValueError(
    `json: unsupported value: ${Number.isNaN(value) ? 'NaN' : value > 0 ? '+Inf' : '-Inf'}`,
  );
}

const DIGIT_FIRST = ['+', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'];

function goTag<T>(
  name: string,
  kinds: readonly Resolved['kind'][],
  firstChars: readonly string[],
  toValue: (r: Resolved) => T,
): ScalarTagDefinition<T> {
  return defineScalarTag<T>(`tag:yaml.org,2002:${name}`, {
    implicit: true,
    implicitFirstChars: firstChars,
    resolve: (source) => {
      const resolved = resolvePlainScalar(source);
      return kinds.includes(resolved.kind) ? toValue(resolved) : NOT_RESOLVED;
    },
    identify: () => false,
  });
}

const resolvedValue = (r: Resolved) => (r.kind === 'str' ? undefined : r.value);

/** The schema kubectl reads YAML with: strings, sequences, mappings, and the scalars above. */
const KUBECTL_SCALAR_TAGS = [
  goTag('null', ['null'], ['', '~', 'n', 'N'], () => null),
  goTag('bool', ['bool'], ['y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O'], (r) => resolvedValue(r) as boolean),
  goTag('int', ['int'], DIGIT_FIRST, (r) => resolvedValue(r) as number | bigint),
  // An explicit !!float takes an integer too, as go-yaml's resolve does.
  goTag('float', ['float', 'int'], ['.', ...DIGIT_FIRST], (r) => jsonNumber(Number(resolvedValue(r)))),
  mergeTag,
  defineScalarTag<string>('tag:yaml.org,2002:binary', {
    // go-yaml decodes !!binary into a Go string; encoding/json then writes invalid UTF-8 as U+FFFD.
    resolve: (source, explicit, name) => {
      const bytes = binaryTag.resolve(source, explicit, name);
      return bytes === NOT_RESOLVED ? NOT_RESOLVED : Buffer.from(bytes as Uint8Array).toString('utf8');
    },
    identify: () => false,
  }),
];

export const KUBECTL_YAML_SCHEMA = new Schema([...FAILSAFE_SCHEMA.tags, ...KUBECTL_SCALAR_TAGS]);

/**
 * The same, with mappings that record the pairs written (yaml-mappings.ts): for the second reading
 * of a document with a repeated key only, as the recording costs every load about 12 %.
 */
export const KUBECTL_YAML_SCHEMA_RECORDING = new Schema([
  ...FAILSAFE_SCHEMA.tags.filter((tag) => tag !== mapTag),
  recordingMapTag,
  ...KUBECTL_SCALAR_TAGS,
]);
