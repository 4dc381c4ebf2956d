/**
 * Type conversions cel-go has and @marcbachmann/cel-js 8.0.0 lacks: the identity overloads
 * timestamp(timestamp) and duration(duration). Source: github.com/google/cel-go@v0.29.2/checker/decls (standard
 * library declarations: TypeConvertTimestamp, TypeConvertDuration).
 */
import type { Environment } from '@marcbachmann/cel-js';

export function registerMissingConversions(env: Environment): void {
  env.registerFunction('timestamp(google.protobuf.Timestamp): google.protobuf.Timestamp', (t: Date) => t);
  env.registerFunction('duration(google.protobuf.Duration): google.protobuf.Duration', (d: unknown) => d);
}
