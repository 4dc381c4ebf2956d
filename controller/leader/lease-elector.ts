import { type Clock, formatMicroTime, sleep, type TimerHandle } from '../../clock/clock.ts';
import type { KubeApi } from '../../kube/api-client.ts';
import { errorMessage, isNotFound } from '../../kube/api-error.ts';
import type { LeaseFence } from '../../kube/lease-fence.ts';
import type { Lease } from '../../kube/objects.ts';
import { LEASES } from '../../kube/resources.ts';
import type { Logger } from '../observability/logger.ts';

export interface LeaseElectorOptions {
  api: KubeApi;
  clock: Clock;
  logger: Logger;
  namespace: string;
  name: string;
  identity: string;
  /** Labels the Lease gets when this elector creates it (a shard's Lease carries its shard name). */
  labels?: Record<string, string>;
  /** client-go defaults: 15 s, 10 s, 2 s. renewDeadline must be shorter than leaseDuration. */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onLeaderChange?: (isLeader: boolean) => void;
  /**
   * The fence of the writes made under this lease: told of every accepted renewal and of the
   * term's end; a write it refuses ends the term at once.
   */
  fence?: LeaseFence;
}

/** Why leading ended. */
export type LeadershipEnd = 'lost' | 'stopped';

/**
 * Leader election on a coordination.k8s.io/v1 Lease, after client-go's LeaderElector: a candidate
 * takes the lease when it is free or when the record it observed has not changed for the lease
 * duration (measured on the local clock, so clock skew between replicas does not matter); the
 * leader renews every retry period, and leading ends the moment a renewal fails, that is, when no
 * renewal succeeds within the renew deadline or another holder is seen. On a clean stop it releases
 * the lease (empty holder, 1 s duration) so a standby takes over at once.
 */
export class LeaseElector {
  private readonly options: Required<Omit<LeaseElectorOptions, 'onLeaderChange' | 'labels' | 'fence'>> &
    Pick<LeaseElectorOptions, 'onLeaderChange' | 'labels' | 'fence'>;
  private observed: Lease | undefined;
  private observedRaw = '';
  /** Monotonic time the last observed change of the record was seen. */
  private observedAt = 0;
  /** Monotonic send time of the last accepted acquire or renewal. */
  private renewedAt = 0;
  private leader = false;

  constructor(options: LeaseElectorOptions) {
    this.options = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...options };
    if (this.options.renewDeadlineMs >= this.options.leaseDurationMs) {
      throw new Error('renewDeadline must be shorter than leaseDuration');
    }
  }

  isLeader(): boolean {
    return this.leader;
  }

  /** The holder in the last observed record. */
  observedHolder(): string | undefined {
    return this.observed?.spec?.holderIdentity || undefined;
  }

  /**
   * Campaigns until elected, then runs `lead` with a signal that aborts the moment leadership ends
   * (its reason is the LeadershipEnd), waits for `lead` to finish, and returns why it ended. `stop`
   * aborting ends leading cleanly: `lead` winds down first, then the lease is released.
   *
   * The term ends as 'lost' at the first of: a renewal that finds another holder; the renew
   * deadline passing since the last accepted renewal (a timer, so a hung renewal or a stalled
   * process cannot stretch it); a write refused by the fence. The fence stops writing at that
   * same deadline even before this loop notices (docs/controller.md, "Fencing").
   */
  async run(stop: AbortSignal, lead: (leading: AbortSignal) => Promise<void>): Promise<LeadershipEnd> {
    const { clock, logger, retryPeriodMs, identity, namespace, name, fence } = this.options;
    while (!stop.aborted && !(await this.tryAcquireOrRenew(stop))) await sleep(clock, this.untilNextTry(), stop);
    if (stop.aborted) return 'stopped';
    logger.info({ identity, lease: `${namespace}/${name}` }, 'became leader');
    const term = new AbortController();
    const within = AbortSignal.any([stop, term.signal]);
    const leading = new AbortController();
    const endTerm = (why: string) => {
      if (term.signal.aborted || stop.aborted) return;
      logger.error(
        { identity, lease: `${namespace}/${name}`, holder: this.observedHolder() },
        `leadership lost: ${why}`,
      );
      fence?.revoke();
      this.setLeader(false);
      term.abort('lost');
      leading.abort('lost');
    };
    const expiry = new ExpiryTimer(clock, () => endTerm('lease not renewed within the renew deadline'));
    const unsubscribe = fence?.onBreach((reason) => endTerm(`a write was refused: ${reason}`));
    this.termRenewed(expiry);
    this.setLeader(true);
    const done = lead(leading.signal).catch((error) => {
      logger.error({ err: errorMessage(error) }, 'leading failed');
    });
    renewing: while (!within.aborted) {
      await sleep(clock, retryPeriodMs, within);
      while (!within.aborted && !(await this.tryAcquireOrRenew(within))) {
        const other = this.observedHolder();
        if (other && other !== identity) {
          endTerm(`the Lease is held by ${other}`);
          break renewing;
        }
        if (expiry.remaining() <= 0) {
          endTerm('lease not renewed within the renew deadline');
          break renewing;
        }
        await sleep(clock, Math.min(retryPeriodMs, expiry.remaining()), within);
      }
      if (within.aborted) break;
      // Overdue timers run in order of their due time after a stall, so this renewal may have been
      // sent after the proof lapsed: the term ended then, whatever the server answers now.
      if (expiry.remaining() <= 0) {
        endTerm('lease not renewed within the renew deadline');
        break;
      }
      this.termRenewed(expiry);
    }
    expiry.cancel();
    unsubscribe?.();
    const end: LeadershipEnd = term.signal.aborted ? 'lost' : 'stopped';
    // On a clean stop the workers finish their reconciles first, still fenced by the last renewal
    // (no more renewals now: past the renew deadline their writes are refused).
    leading.abort(end);
    await done;
    fence?.revoke();
    if (end === 'stopped') {
      await this.release();
      this.setLeader(false);
    }
    return end;
  }

  /** A renewal (or the acquire) of the running term was accepted: the fence and the deadline move on. */
  private termRenewed(expiry: ExpiryTimer): void {
    this.options.fence?.renewed(this.renewedAt);
    expiry.arm(this.renewedAt + this.options.renewDeadlineMs);
  }

  /** Sleep length for a candidate: the retry period, or less when the observed lease expires sooner. */
  private untilNextTry(): number {
    const { retryPeriodMs, clock } = this.options;
    const expiresIn = this.observedAt + this.observedDurationMs() - clock.monotonic();
    return Math.max(1, Math.min(retryPeriodMs, expiresIn + 1));
  }

  private observedDurationMs(): number {
    return (this.observed?.spec?.leaseDurationSeconds ?? 0) * 1000;
  }

  private setLeader(value: boolean): void {
    if (this.leader === value) return;
    this.leader = value;
    this.options.onLeaderChange?.(value);
  }

  private observe(lease: Lease): void {
    const raw = JSON.stringify(lease.spec ?? {});
    if (raw !== this.observedRaw) {
      this.observedRaw = raw;
      this.observedAt = this.options.clock.monotonic();
    }
    this.observed = lease;
  }

  private leaseValid(now: number): boolean {
    return this.observedAt + this.observedDurationMs() > now;
  }

  /** One attempt, as client-go's tryAcquireOrRenew. True when we hold the lease afterwards. */
  async tryAcquireOrRenew(signal?: AbortSignal): Promise<boolean> {
    const { api, clock, logger, namespace, name, identity, leaseDurationMs } = this.options;
    const now = clock.now();
    // Sent no earlier than this: the time the fence counts from (before any request of the attempt).
    const sentAt = clock.monotonic();
    const spec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.round(leaseDurationMs / 1000),
      acquireTime: formatMicroTime(now),
      renewTime: formatMicroTime(now),
      leaseTransitions: 0,
    };
    const call = { signal, unthrottled: true };
    try {
      // Fast path: the leader renews the record it wrote last.
      if (this.leader && this.observed && this.leaseValid(sentAt)) {
        const current = this.observed.spec ?? {};
        try {
          const written = await api.update<Lease>(
            LEASES,
            {
              ...this.observed,
              spec: { ...spec, acquireTime: current.acquireTime, leaseTransitions: current.leaseTransitions ?? 0 },
            },
            call,
          );
          this.observe(written);
          this.renewedAt = sentAt;
          return true;
        } catch (error) {
          logger.debug({ err: errorMessage(error) }, 'fast lease renewal failed; re-reading the lease');
        }
      }
      let lease: Lease;
      try {
        lease = await api.get<Lease>(LEASES, namespace, name, call);
      } catch (error) {
        if (!isNotFound(error)) throw error;
        const created = await api.create<Lease>(
          LEASES,
          namespace,
          {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace, ...(this.options.labels && { labels: this.options.labels }) },
            spec,
          },
          call,
        );
        this.observe(created);
        this.renewedAt = sentAt;
        return true;
      }
      this.observe(lease);
      const holder = lease.spec?.holderIdentity;
      if (holder && holder !== identity && this.leaseValid(clock.monotonic())) return false;
      const transitions = lease.spec?.leaseTransitions ?? 0;
      const next =
        holder === identity && this.leader
          ? { ...spec, acquireTime: lease.spec?.acquireTime, leaseTransitions: transitions }
          : { ...spec, leaseTransitions: transitions + 1 };
      const written = await api.update<Lease>(LEASES, { ...lease, spec: next }, call);
      this.observe(written);
      this.renewedAt = sentAt;
      return true;
    } catch (error) {
      if (!signal?.aborted) logger.warn({ err: errorMessage(error) }, 'lease acquire/renew failed');
      return false;
    }
  }

  /** Gives the lease up (client-go's release): empty holder, 1 s duration. */
  private async release(): Promise<void> {
    const { api, clock, logger, namespace, name, identity } = this.options;
    try {
      const lease = await api.get<Lease>(LEASES, namespace, name, { unthrottled: true });
      if (lease.spec?.holderIdentity !== identity) return;
      const now = formatMicroTime(clock.now());
      await api.update<Lease>(
        LEASES,
        {
          ...lease,
          spec: {
            holderIdentity: '',
            leaseDurationSeconds: 1,
            acquireTime: now,
            renewTime: now,
            leaseTransitions: lease.spec?.leaseTransitions ?? 0,
          },
        },
        { unthrottled: true },
      );
      logger.info({ identity }, 'released the lease');
    } catch (error) {
      logger.warn({ err: errorMessage(error) }, 'releasing the lease failed');
    }
  }
}

/** One pending callback at a monotonic deadline, moved by `arm`. */
class ExpiryTimer {
  private readonly clock: Clock;
  private readonly onExpiry: () => void;
  private handle: TimerHandle | undefined;
  private deadline = 0;

  constructor(clock: Clock, onExpiry: () => void) {
    this.clock = clock;
    this.onExpiry = onExpiry;
  }

  arm(deadline: number): void {
    this.cancel();
    this.deadline = deadline;
    this.handle = this.clock.setTimeout(() => {
      this.handle = undefined;
      this.onExpiry();
    }, this.remaining());
  }

  remaining(): number {
    return this.deadline - this.clock.monotonic();
  }

  cancel(): void {
    if (this.handle) this.clock.clearTimeout(this.handle);
    this.handle = undefined;
  }
}
