/**
 * Standard-library overloads cel-go has and @marcbachmann/cel-js 8.0.0 lacks: the identity conversions
 * timestamp(timestamp) and duration(duration), and ordering of bytes (_<_, _<=_, _>_, _>=_ on bytes).
 * Source: github.com/google/cel-go@v0.29.2/common/stdlib (TypeConvertTimestamp, TypeConvertDuration, LessBytes...).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { celCompare } from './compare.ts';

export function registerMissingConversions(env: Environment): void {
  env.registerFunction('timestamp(google.protobuf.Timestamp): google.protobuf.Timestamp', (t: Date) => t);
  env.registerFunction('duration(google.protobuf.Duration): google.protobuf.Duration', (d: unknown) => d);
  env.registerOperator('bytes < bytes', (a: Uint8Array, b: Uint8Array) => celCompare(a, b) < 0);
  env.registerOperator('bytes <= bytes', (a: Uint8Array, b: Uint8Array) => celCompare(a, b) <= 0);
  env.registerOperator('bytes > bytes', (a: Uint8Array, b: Uint8Array) => celCompare(a, b) > 0);
  env.registerOperator('bytes >= bytes', (a: Uint8Array, b: Uint8Array) => celCompare(a, b) >= 0);
}
