/**
 * strfmt.ParseDuration (kube-openapi's validation/strfmt), the parser of `format: duration` for OpenAPI
 * validation and for the CEL value of such a string: Go's time.ParseDuration, else every "<digits> <unit>"
 * found anywhere in the string, summed ("3 hours" is 3h; "1 day 2h" 26h), in int64 nanoseconds that wrap as
 * Go's time.Duration arithmetic does.
 * Source: k8s.io/kube-openapi pkg/validation/strfmt/duration.go.
 */
import { parseGoDurationNanos } from './go-duration.ts';

const NANOSECOND = 1n;
const MICROSECOND = 1000n * NANOSECOND;
const MILLISECOND = 1000n * MICROSECOND;
const SECOND = 1000n * MILLISECOND;
const MINUTE = 60n * SECOND;
const HOUR = 60n * MINUTE;

/** timeUnits with their multipliers: the last variant of each matches as a prefix ("hours", "minutes"). */
const UNITS: ReadonlyArray<readonly [readonly string[], bigint]> = [
  [['ns', 'nano'], NANOSECOND],
  [['us', 'µs', 'micro'], MICROSECOND],
  [['ms', 'milli'], MILLISECOND],
  [['s', 'sec'], SECOND],
  [['m', 'min'], MINUTE],
  [['h', 'hr', 'hour'], HOUR],
  [['d', 'day'], 24n * HOUR],
  [['w', 'wk', 'week'], 7n * 24n * HOUR],
];

const INT64_MAX = 2n ** 63n - 1n;

export type StrfmtDuration = { nanos: bigint } | { error: string };

/** strings.EqualFold for the ASCII and µ variants here. */
const equalFold = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export function parseStrfmtDuration(candidate: string): StrfmtDuration {
  const go = parseGoDurationNanos(candidate);
  if (go !== undefined) return { nanos: go };
  let nanos = 0n;
  let ok = false;
  for (const m of candidate.matchAll(/(([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+))/gu)) {
    const digits = m[2] ?? '';
    const factor = BigInt(digits);
    if (factor > INT64_MAX) return { error: `strconv.Atoi: parsing "${digits}": value out of range` };
    const unit = (m[3] ?? '').toLowerCase().trim();
    for (const [variants, multiplier] of UNITS) {
      const last = variants.length - 1;
      variants.forEach((variant, i) => {
        if ((i === last && unit.startsWith(variant)) || equalFold(variant, unit)) {
          ok = true;
          nanos = BigInt.asIntN(64, nanos + BigInt.asIntN(64, factor * multiplier));
        }
      });
    }
  }
  return ok ? { nanos } : { error: `unable to parse ${candidate} as duration` };
}
