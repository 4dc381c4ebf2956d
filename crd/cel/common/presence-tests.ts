/**
 * The select each has() call tests, for issues.ts: cel-go reports an error about the tested field at
 * the has() call, where its parser put the presence test (has-macro.ts records them while checking).
 */
const calls = new WeakMap<object, object>();

export function recordPresenceTest(select: object, call: object): void {
  calls.set(select, call);
}

/** The has() call whose tested select `node` is. */
export function presenceTestCall(node: object): object | undefined {
  return calls.get(node);
}
