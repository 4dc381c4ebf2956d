/**
 * Appends every item of `items` to `target`. `target.push(...items)` passes each item as an argument
 * and overflows the stack past about 100,000 items, which input (unknown fields, finalizers, errors of
 * a long list) can reach.
 */
export function append<T>(target: T[], items: readonly T[]): T[] {
  for (const item of items) target.push(item);
  return target;
}
