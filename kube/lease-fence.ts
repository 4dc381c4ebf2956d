import type { Clock } from '../clock/clock.ts';

/** A write that was not sent: the writer could not prove, at that moment, that it holds its lease. */
export class FencedError extends Error {
  readonly lease: string;

  constructor(lease: string, message: string) {
    super(message);
    this.name = 'FencedError';
    this.lease = lease;
  }
}

export function isFenced(error: unknown): error is FencedError {
  return error instanceof FencedError;
}

/** What a writer asks right before a write leaves the process. */
export interface WriteFence {
  /** Throws FencedError when `what` may not be sent now. */
  assertMayWrite(what: string): void;
}

/**
 * Proof of holding one lease, for the writes made under it (docs/controller.md, "Fencing").
 *
 * The elector reports each accepted acquire or renewal with the monotonic time at which that
 * request was sent; a write may leave the process only while that time is younger than the renew
 * deadline. Another candidate takes the lease over no sooner than a lease duration after it saw
 * that same renewal, which the server wrote after it was sent, so with renewDeadline <
 * leaseDuration a write that passes the check precedes any takeover by at least their difference.
 *
 * The first refused write also ends the term at once (`onBreach`), so the elector stops leading
 * without waiting for its next renewal attempt.
 */
export class LeaseFence implements WriteFence {
  readonly lease: string;
  private readonly clock: Clock;
  private readonly renewDeadlineMs: number;
  /** Monotonic send time of the last accepted acquire/renewal while held; undefined when not held. */
  private renewedAt: number | undefined;
  private readonly breachListeners = new Set<(reason: string) => void>();

  constructor(options: { lease: string; clock: Clock; renewDeadlineMs: number }) {
    this.lease = options.lease;
    this.clock = options.clock;
    this.renewDeadlineMs = options.renewDeadlineMs;
  }

  /** The elector's report: an acquire or renewal sent at `sentAt` (monotonic) was accepted. */
  renewed(sentAt: number): void {
    this.renewedAt = this.renewedAt === undefined ? sentAt : Math.max(this.renewedAt, sentAt);
  }

  /** The elector's report: the term is over (lost, released or stopped). Every later write is refused. */
  revoke(): void {
    this.renewedAt = undefined;
  }

  /** Called once per refused write with the reason; the elector ends its term there. */
  onBreach(listener: (reason: string) => void): () => void {
    this.breachListeners.add(listener);
    return () => this.breachListeners.delete(listener);
  }

  /** Whether a write may leave now, and why not. */
  check(): { ok: true } | { ok: false; reason: string } {
    if (this.renewedAt === undefined) return { ok: false, reason: `the Lease ${this.lease} is not held` };
    const age = this.clock.monotonic() - this.renewedAt;
    if (age < this.renewDeadlineMs) return { ok: true };
    return {
      ok: false,
      reason: `the Lease ${this.lease} was last renewed ${(age / 1000).toFixed(1)} s ago (renew deadline ${this.renewDeadlineMs / 1000} s)`,
    };
  }

  assertMayWrite(what: string): void {
    const verdict = this.check();
    if (verdict.ok) return;
    for (const listener of [...this.breachListeners]) listener(verdict.reason);
    throw new FencedError(this.lease, `${what}: not sent: ${verdict.reason}`);
  }
}
