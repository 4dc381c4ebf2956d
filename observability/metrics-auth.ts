/**
 * Who may read /metrics, decided by the API server as controller-runtime's secure metrics server
 * decides it (pkg/metrics/filters: k8s.io/apiserver's delegating authenticator and authorizer): the
 * bearer token by a TokenReview, then `get` on the non-resource URL by a SubjectAccessReview. The
 * answers are cached as there (tokens 1 minute either way, allowed 5 minutes, denied 30 seconds),
 * and the caches are bounded, so a flood of made-up tokens costs the API server at most one review
 * each per minute and this process a fixed amount of memory.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock/clock.ts';
import type { KubeApi } from '../kube/api-client.ts';
import { collectionPath, SUBJECT_ACCESS_REVIEWS, TOKEN_REVIEWS } from '../kube/resources.ts';

export type MetricsDecision = { allowed: true } | { allowed: false; status: 401 | 403 | 500; message: string };

interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export const METRICS_AUTH_CACHE = {
  tokenTtlMs: 60_000,
  allowTtlMs: 5 * 60_000,
  denyTtlMs: 30_000,
  /** Entries per cache; the oldest go first. */
  maxEntries: 4096,
} as const;

/** A map whose entries expire, holding at most `max` (the oldest dropped first). */
class ExpiringCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private readonly clock: Clock;
  private readonly max: number;

  constructor(clock: Clock, max: number) {
    this.clock = clock;
    this.max = max;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expires > this.clock.now()) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, ttlMs: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, expires: this.clock.now() + ttlMs });
  }
}

export interface MetricsAuthOptions {
  api: KubeApi;
  clock: Clock;
  logger: Pick<Logger, 'warn' | 'debug'>;
}

export class MetricsAuthorizer {
  private readonly options: MetricsAuthOptions;
  private readonly users: ExpiringCache<UserInfo | null>;
  private readonly decisions: ExpiringCache<boolean>;

  constructor(options: MetricsAuthOptions) {
    this.options = options;
    this.users = new ExpiringCache(options.clock, METRICS_AUTH_CACHE.maxEntries);
    this.decisions = new ExpiringCache(options.clock, METRICS_AUTH_CACHE.maxEntries);
  }

  /** May the bearer of this Authorization header `method` the path? */
  async decide(method: string, path: string, authorization: string | undefined): Promise<MetricsDecision> {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    if (token === undefined) return { allowed: false, status: 401, message: 'Unauthorized' };
    let user: UserInfo | null;
    try {
      user = await this.authenticate(token);
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message }, 'Authentication failed');
      return { allowed: false, status: 500, message: 'Authentication failed' };
    }
    if (user === null) return { allowed: false, status: 401, message: 'Unauthorized' };
    const verb = method.toLowerCase();
    try {
      if (await this.authorize(user, verb, path)) return { allowed: true };
    } catch (error) {
      const message = `Authorization for user ${user.username} failed`;
      this.options.logger.warn({ err: (error as Error).message }, message);
      return { allowed: false, status: 500, message };
    }
    return { allowed: false, status: 403, message: `Authorization denied for user ${user.username}` };
  }

  private async authenticate(token: string): Promise<UserInfo | null> {
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.users.get(key);
    if (cached !== undefined) return cached;
    const review = await this.options.api.post<{ status?: { authenticated?: boolean; user?: UserInfo } }>(
      collectionPath(TOKEN_REVIEWS),
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    );
    const user = review.status?.authenticated === true && review.status.user?.username ? review.status.user : null;
    this.users.set(key, user, METRICS_AUTH_CACHE.tokenTtlMs);
    return user;
  }

  private async authorize(user: UserInfo, verb: string, path: string): Promise<boolean> {
    const spec = {
      user: user.username,
      uid: user.uid,
      groups: user.groups,
      extra: user.extra,
      nonResourceAttributes: { path, verb },
    };
    const key = JSON.stringify(spec);
    const cached = this.decisions.get(key);
    if (cached !== undefined) return cached;
    const review = await this.options.api.post<{ status?: { allowed?: boolean; reason?: string } }>(
      collectionPath(SUBJECT_ACCESS_REVIEWS),
      { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
    );
    const allowed = review.status?.allowed === true;
    if (!allowed)
      this.options.logger.debug({ user: user.username, reason: review.status?.reason }, 'metrics access denied');
    this.decisions.set(key, allowed, allowed ? METRICS_AUTH_CACHE.allowTtlMs : METRICS_AUTH_CACHE.denyTtlMs);
    return allowed;
  }
}
