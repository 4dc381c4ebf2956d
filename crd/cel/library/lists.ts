/**
 * Kubernetes list library: isSorted, sum, min, max, indexOf, lastIndexOf.
 * Source: k8s.io/apiserver@v0.37.2/pkg/cel/library/lists.go.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { durationFromNanos, durationToNanos } from '../common/duration.ts';
import { CelFunctionError } from '../common/errors.ts';
import { type CelComparable, celCompare, celEquals } from './compare.ts';

/** The scalar types whose values have a size of 1 (cel-go computeTypeSize) and that compare. */
export const SCALAR_TYPES = ['int', 'uint', 'double', 'bool', 'google.protobuf.Duration', 'google.protobuf.Timestamp'];

/** The element types of lists that sort and compare (cel-go comparableTypes). */
export const COMPARABLE = [...SCALAR_TYPES, 'string', 'bytes'];

function isSorted(list: CelComparable[]): boolean {
  for (let i = 1; i < list.length; i++) {
    if (celCompare(list[i - 1] as CelComparable, list[i] as CelComparable) > 0) return false;
  }
  return true;
}

function extreme(name: string, prefer: number) {
  return (list: CelComparable[]): CelComparable => {
    if (list.length === 0) throw new CelFunctionError(`${name} called on empty list`);
    let result = list[0] as CelComparable;
    for (const v of list.slice(1)) if (celCompare(result, v) === prefer) result = v;
    return result;
  };
}

export function registerLists(env: Environment): void {
  for (const t of COMPARABLE) {
    env.registerFunction(`list<${t}>.isSorted(): bool`, isSorted);
    env.registerFunction(`list<${t}>.min(): ${t}`, extreme('min', 1));
    env.registerFunction(`list<${t}>.max(): ${t}`, extreme('max', -1));
  }
  env.registerFunction('list<int>.sum(): int', (l: bigint[]) => l.reduce((a, b) => a + b, 0n));
  env.registerFunction('list<double>.sum(): double', (l: number[]) => l.reduce((a, b) => a + b, 0));
  env.registerFunction(
    'list<google.protobuf.Duration>.sum(): google.protobuf.Duration',
    (l: Parameters<typeof durationToNanos>[0][]) => durationFromNanos(l.reduce((a, b) => a + durationToNanos(b), 0n)),
  );
  env.registerFunction('list<A>.k8s_indexOf(A): int', (l: unknown[], item: unknown) => {
    for (let i = 0; i < l.length; i++) if (celEquals(l[i], item)) return BigInt(i);
    return -1n;
  });
  env.registerFunction('list<A>.k8s_lastIndexOf(A): int', (l: unknown[], item: unknown) => {
    for (let i = l.length - 1; i >= 0; i--) if (celEquals(l[i], item)) return BigInt(i);
    return -1n;
  });
}
