/**
 * cel-go's extended list library at the version the Kubernetes environment enables for CRD rules
 * (ext.Lists(ext.ListsVersion(3)), since 1.34): slice, flatten, lists.range, reverse, distinct and
 * sort, with their error texts (the sortBy macro: sort-by.ts). Source:
 * github.com/google/cel-go@v0.29.2/ext/lists.go (static costs in cost.ts follow its v3 estimators).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { CelFunctionError } from '../common/errors.ts';
import { type CelComparable, celCompare, celEquals } from './compare.ts';
import { COMPARABLE } from './lists.ts';

/** ext.Lists' default ceiling for lists.range, which Kubernetes keeps. */
export const MAX_RANGE_SIZE = 1_000_000n;

class ListsNamespace {}

function slice(list: unknown[], start: bigint, end: bigint): unknown[] {
  if (start < 0n || end < 0n)
    throw new CelFunctionError(`cannot slice(${start}, ${end}), negative indexes not supported`);
  if (start > end)
    throw new CelFunctionError(`cannot slice(${start}, ${end}), start index must be less than or equal to end index`);
  if (BigInt(list.length) < end)
    throw new CelFunctionError(`cannot slice(${start}, ${end}), list is length ${list.length}`);
  return list.slice(Number(start), Number(end));
}

function flatten(list: unknown[], depth: bigint): unknown[] {
  if (depth < 0n) throw new CelFunctionError('level must be non-negative');
  const out: unknown[] = [];
  for (const item of list) {
    if (!Array.isArray(item) || depth === 0n) out.push(item);
    else for (const inner of flatten(item, depth - 1n)) out.push(inner);
  }
  return out;
}

function range(n: bigint): bigint[] {
  if (n < 0n) throw new CelFunctionError(`lists.range: size must be non-negative, got ${n}`);
  if (n > MAX_RANGE_SIZE)
    throw new CelFunctionError(`lists.range: size ${n} exceeds maximum allowed (${MAX_RANGE_SIZE})`);
  return Array.from({ length: Number(n) }, (_, i) => BigInt(i));
}

function distinct(list: unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const item of list) if (!out.some((seen) => celEquals(item, seen))) out.push(item);
  return out;
}

function sort(list: CelComparable[]): CelComparable[] {
  // A stable sort: equal elements are equal values, so the order among them cannot show.
  return [...list].sort(celCompare);
}

export function registerExtLists(env: Environment): void {
  env.registerType('ListsNamespace', ListsNamespace);
  env.registerConstant('lists', 'ListsNamespace', new ListsNamespace());
  env.registerFunction('ListsNamespace.range(int): list<int>', (_: ListsNamespace, n: bigint) => range(n));
  env.registerFunction('list<A>.slice(int, int): list<A>', slice);
  env.registerFunction('list<list<A>>.flatten(): list<A>', (list: unknown[]) => flatten(list, 1n));
  env.registerFunction('list<dyn>.flatten(int): list<dyn>', flatten);
  env.registerFunction('list<A>.reverse(): list<A>', (list: unknown[]) => [...list].reverse());
  env.registerFunction('list<A>.distinct(): list<A>', distinct);
  for (const t of COMPARABLE) env.registerFunction(`list<${t}>.sort(): list<${t}>`, sort);
}
