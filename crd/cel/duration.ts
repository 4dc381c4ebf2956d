/**
 * Go's time.ParseDuration and Duration.String for CEL duration values.
 * Source: Go src/time/format.go (ParseDuration), src/time/time.go (Duration.String).
 */
import { Duration } from '@marcbachmann/cel-js/evaluator';

const UNIT_NANOS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const PART = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;
const NANOS_PER_SECOND = 1_000_000_000n;

/** Parses a Go duration string ("1h30m", "-1.5s") into nanoseconds, or undefined when it is not one. */
export function parseGoDurationNanos(input: string): bigint | undefined {
  let s = input;
  let negative = false;
  if (s[0] === '-' || s[0] === '+') {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') return undefined;
  let total = 0n;
  while (s !== '') {
    const m = PART.exec(s);
    if (!m) return undefined;
    const [all, whole = '', frac = '', unit = ''] = m;
    if (whole === '' && frac === '') return undefined;
    const scale = UNIT_NANOS[unit] ?? 1n;
    total += BigInt(whole || '0') * scale;
    if (frac !== '') total += (BigInt(frac) * scale) / 10n ** BigInt(frac.length);
    s = s.slice(all.length);
  }
  return negative ? -total : total;
}

export function durationFromNanos(nanos: bigint): Duration {
  const seconds = nanos / NANOS_PER_SECOND;
  return new Duration(seconds, Number(nanos % NANOS_PER_SECOND));
}

export function durationToNanos(d: Duration): bigint {
  return d.seconds * NANOS_PER_SECOND + BigInt(d.nanos);
}

/** A CEL duration from a Go duration string, or undefined when the string is not a duration. */
export function parseDuration(input: string): Duration | undefined {
  const nanos = parseGoDurationNanos(input);
  return nanos === undefined ? undefined : durationFromNanos(nanos);
}

/** The protobuf JSON form of a duration, as cel-go prints it: seconds with up to 9 fractional digits + "s". */
export function formatDurationSeconds(d: Duration): string {
  const nanos = durationToNanos(d);
  const negative = nanos < 0n;
  const abs = negative ? -nanos : nanos;
  const whole = abs / NANOS_PER_SECOND;
  const frac = abs % NANOS_PER_SECOND;
  const fracText = frac === 0n ? '' : `.${frac.toString().padStart(9, '0').replace(/0+$/, '')}`;
  return `${negative ? '-' : ''}${whole}${fracText}s`;
}
