/**
 * Writes the review answers decided in one turn of the event loop together, right after the turn
 * (in its check phase), instead of one at a time between decisions. Each answer is one write on its
 * own keep-alive connection; written between decisions, every write finds the caller's reader
 * asleep again and pays for waking it, which at a few thousand reviews a second cost more than
 * the decision itself. Written back to back, the writes of a turn share that cost. An answer waits
 * at most for the other reviews decided in the same turn (docs/webhook-throughput.md).
 */
interface Destroyable {
  destroy(): void;
}

export class AnswerBatch {
  private pending: Array<{ write: () => void; connection: Destroyable }> = [];
  private scheduled = false;
  private readonly onError: (error: unknown) => void;

  /**
   * `onError` hears of a write that threw; its connection is destroyed, so its caller learns at once
   * instead of at its timeout, and the other writes of the batch still go out.
   */
  constructor(onError: (error: unknown) => void) {
    this.onError = onError;
  }

  /** Runs `write` after the current turn, with the other writes added in it, in the order added. */
  add(connection: Destroyable, write: () => void): void {
    this.pending.push({ write, connection });
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    const writes = this.pending;
    this.pending = [];
    this.scheduled = false;
    for (const { write, connection } of writes) {
      try {
        write();
      } catch (error) {
        connection.destroy();
        this.onError(error);
      }
    }
  };
}
