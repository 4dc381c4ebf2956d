/**
 * cel-go sets extension: sets.contains, sets.equivalent, sets.intersects.
 * Source: github.com/google/cel-go@v0.29.2/ext/sets.go.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { celEquals } from './compare.ts';

class SetsNamespace {}

const has = (list: unknown[], v: unknown) => list.some((x) => celEquals(x, v));
const contains = (a: unknown[], b: unknown[]) => b.every((v) => has(a, v));

export function registerSets(env: Environment): void {
  env.registerType('SetsNamespace', SetsNamespace);
  env.registerConstant('sets', 'SetsNamespace', new SetsNamespace());
  env.registerFunction(
    'SetsNamespace.contains(list<A>, list<A>): bool',
    (_: SetsNamespace, a: unknown[], b: unknown[]) => contains(a, b),
  );
  env.registerFunction(
    'SetsNamespace.equivalent(list<A>, list<A>): bool',
    (_: SetsNamespace, a: unknown[], b: unknown[]) => contains(a, b) && contains(b, a),
  );
  env.registerFunction(
    'SetsNamespace.intersects(list<A>, list<A>): bool',
    (_: SetsNamespace, a: unknown[], b: unknown[]) => b.some((v) => has(a, v)),
  );
}
