/** Lets pending promise callbacks run (several rounds of the event loop, for chains of awaits). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
