/**
 * Standard-library overloads cel-go has and @marcbachmann/cel-js 8.0.0 lacks: the identity conversions
 * timestamp(timestamp) and duration(duration), int() and string() of a duration or a timestamp, and
 * ordering of bytes (_<_, _<=_, _>_, _>=_ on bytes).
 * Source: github.com/google/cel-go@v0.29.2/common/stdlib (TypeConvertTimestamp, TypeConvertDuration,
 * TypeConvertInt, TypeConvertString, LessBytes...) and common/types (Duration and Timestamp ConvertToType).
 */
import type { Environment } from '@marcbachmann/cel-js';
import type { Duration } from '@marcbachmann/cel-js/evaluator';
import { plainDecimal } from '../../apimachinery/go-format.ts';
import { durationToNanos } from '../common/duration.ts';
import { celCompare } from './compare.ts';

const NANOS_PER_SECOND = 1_000_000_000n;
/** Go's time.Duration.Seconds() as float64, printed with strconv 'f', -1, then "s". */
function durationString(d: Duration): string {
  const nanos = durationToNanos(d);
  const seconds = Number(nanos / NANOS_PER_SECOND) + Number(nanos % NANOS_PER_SECOND) / 1e9;
  return `${plainDecimal(seconds)}s`;
}

/** time.RFC3339Nano in UTC: fractional seconds without trailing zeros. */
function timestampString(t: Date): string {
  return t.toISOString().replace(/\.(\d*?)0*Z$/, (_m, digits: string) => (digits ? `.${digits}Z` : 'Z'));
}

export function registerMissingConversions(env: Environment): void {
  env.registerFunction('timestamp(google.protobuf.Timestamp): google.protobuf.Timestamp', (t: Date) => t);
  env.registerFunction('duration(google.protobuf.Duration): google.protobuf.Duration', (d: unknown) => d);
  env.registerFunction('int(google.protobuf.Duration): int', (d: Duration) => durationToNanos(d));
  env.registerFunction('int(google.protobuf.Timestamp): int', (t: Date) => BigInt(Math.floor(t.getTime() / 1000)));
  env.registerFunction('string(google.protobuf.Duration): string', durationString);
  env.registerFunction('string(google.protobuf.Timestamp): string', timestampString);
  env.registerOperator('bytes < bytes', (a: Uint8Array, b: Uint8Array) => celCompare(a, b) < 0);
  env.registerOperator('bytes <= bytes', (a: Uint8Array, b: Uint8Array) => celCompare(a, b) <= 0);
  env.registerOperator('bytes > bytes', (a: Uint8Array, b: Uint8Array) => celCompare(a, b) > 0);
  env.registerOperator('bytes >= bytes', (a: Uint8Array, b: Uint8Array) => celCompare(a, b) >= 0);
}
