/**
 * Go's time.ParseDuration and Duration.String for CEL duration values.
 * Source: Go src/time/format.go (ParseDuration), src/time/time.go (Duration.String).
 */
import { Duration } from '@marcbachmann/cel-js/evaluator';
import { parseGoDurationNanos } from '../../apimachinery/go-duration.ts';

export { parseGoDurationNanos };

const NANOS_PER_SECOND = 1_000_000_000n;

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
