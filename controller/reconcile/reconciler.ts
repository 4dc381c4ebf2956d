import { DRAIN_LABEL, FINALIZER, SHARD_LABEL, STATICSITES, type StaticSiteV1, siteHostname } from '../../api/index.ts';
import { type Clock, formatTime } from '../../clock/clock.ts';
import type { KubeApi } from '../../kube/api-client.ts';
import { ApiError, errorMessage, isConflict, isNotFound } from '../../kube/api-error.ts';
import { type Gateway, type KubeObject, objectKey, splitKey } from '../../kube/objects.ts';
import type { ClaimVerdict, HostnameClaims } from '../claims/hostname-claims.ts';
import type { EventRecorder, EventType } from '../observability/events.ts';
import type { Logger } from '../observability/logger.ts';
import { OwnWrites } from '../own-writes.ts';
import {
  describeTarget,
  type ExternalRecord,
  type RecordStore,
  recordSets,
  type ServedVia,
} from '../records/record-store.ts';
import { isDraining, shardOf } from '../sharding/shard-moves.ts';
import { type ChildKind, type ChildOptions, childName } from './children.ts';
import { type ChildLookup, type EnsureResult, ensureChild } from './ensure.ts';
import { type ChildrenReadiness, childrenReadiness } from './readiness.ts';
import { desiredStatus, type Readiness, type StepReason, statusUnchanged } from './status.ts';

/** What a reconcile asks of the queue when it did not fail. */
export interface ReconcileResult {
  requeueAfterMs?: number;
}

/** A reconcile that reported its problem in status and wants the queue's backoff. */
export class ReconcileProblem extends Error {
  override name = 'ReconcileProblem';
}

export interface ReconcilerConfig extends ChildOptions {
  /** Hostname of a site whose spec has none: `<name>.<namespace>.<baseDomain>`. */
  baseDomain: string;
  /** How long to wait for a child that is being deleted before creating it again. */
  terminatingRequeueMs?: number;
  /**
   * StaticSites in these namespaces are left alone: no read, no write, one info log per site. The
   * webhooks skip the same namespaces (api/scope.ts EXCLUDED_NAMESPACES is the default of both).
   */
  excludedNamespaces?: readonly string[];
  /**
   * `--sharded`: this replica's shard. Only sites labelled with it are reconciled; one the sharder
   * drained is handed over (its shard labels removed) and left alone from then on.
   */
  shard?: string;
}

/** A child kind of the registry (controller/child-registry.ts) and the cache ensure reads it from. */
export interface CachedChild {
  kind: ChildKind;
  cache: ChildLookup<KubeObject>;
}

export interface ReconcilerDeps {
  api: KubeApi;
  /**
   * The sites informer: a reconcile reads its site here and asks the API server only when the cache
   * has no such site or is behind this controller's own last write to it. Without it every reconcile
   * GETs its site.
   */
  sites?: ChildLookup<StaticSiteV1>;
  /**
   * The child kinds, in the registry's order, each with its informer cache: each is ensured (unless
   * unserved), and its readiness hook decides with the others the site's Ready, URL and record.
   */
  children: readonly CachedChild[];
  records: RecordStore;
  /** Hostname claims: a site publishes a record only for a hostname it holds. */
  claims: HostnameClaims;
  /** With --gateway: the Gateway's informer, for the readiness hooks (ReadinessContext). */
  gateways?: ChildLookup<Gateway>;
  events: EventRecorder;
  clock: Clock;
  logger: Logger;
  config: ReconcilerConfig;
  /** The record of this controller's own writes, shared with the event handlers (echo suppression). */
  writes?: OwnWrites;
}

/** An Event about the site, as a step reports it. */
interface SiteEvent {
  type: EventType;
  reason: string;
  message: string;
}

/** What one step of a pass found: the problems status shows, the Events to emit, failures status does not show. */
interface StepOutcome {
  problems: Readiness[];
  events: SiteEvent[];
  /** Failures that fail the pass (with backoff) without a place in status: a claim that could not be released. */
  failures: string[];
}

interface ChildrenOutcome extends StepOutcome {
  /** The children as written or found, by kind (a child left alone for a conflict is absent). */
  objects: Map<string, KubeObject>;
  /** A child is being deleted: the pass asks to be run again shortly. */
  terminating: boolean;
  /**
   * A child write failed: the pass stops there and fails with `error`. `problem` is what status shows;
   * none for a 409 Conflict, which is routine (the retry re-reads) and leaves status alone.
   */
  failed?: { error: unknown; problem?: Readiness };
}

interface ClaimOutcome extends StepOutcome {
  /** Absent when claiming failed. */
  verdict?: ClaimVerdict;
}

/** The record step's inputs: what to publish, and whether this site holds the hostname. */
interface RecordPass {
  key: string;
  site: StaticSiteV1;
  record: ExternalRecord;
  verdict: ClaimVerdict | undefined;
  /** An earlier step found a problem: nothing is published. */
  blocked: boolean;
}

/** The kind the record of our own writes files a site under. */
const KIND_SITE = 'StaticSite';

const stepOutcome = (): StepOutcome => ({ problems: [], events: [], failures: [] });
const normal = (reason: string, message: string): SiteEvent => ({ type: 'Normal', reason, message });
const problem = (reason: StepReason, message: string): Readiness => ({ status: 'False', reason, message });

/** An API error in the server's own words, else the error's message. */
function serverWords(error: unknown): string {
  return error instanceof ApiError ? error.serverMessage : errorMessage(error);
}

/** The site's external record; served `via` what a child's readiness hook named, pointing at its addresses. */
export function externalRecordFor(site: StaticSiteV1, baseDomain: string, via?: ServedVia): ExternalRecord {
  const { name, namespace } = site.metadata;
  const record: ExternalRecord = {
    hostname: siteHostname(site, baseDomain),
    service: `${childName(site)}.${namespace}.svc.cluster.local`,
    port: 80,
    site: `${namespace}/${name}`,
  };
  return via ? { ...record, via } : record;
}

/**
 * Converges one StaticSite (docs/controller.md): reads the site (from the cache when it shows our
 * last write, else with a GET), finalizes it when it is being deleted, otherwise makes sure of the
 * finalizer, then runs one pass of named steps: the children (the registry's kinds), the hostname
 * claim, the external record, and last the status, written once. Throws on any failure; the queue
 * retries with backoff.
 */
export class SiteReconciler {
  private readonly deps: ReconcilerDeps;
  private readonly excluded: ReadonlySet<string>;
  /** Sites in an excluded namespace already logged (once per site). */
  private readonly leftAlone = new Set<string>();
  /** This controller's own writes: a cached site behind them is not read. */
  private readonly writes: OwnWrites;

  constructor(deps: ReconcilerDeps) {
    this.deps = deps;
    this.excluded = new Set(deps.config.excludedNamespaces ?? []);
    this.writes = deps.writes ?? new OwnWrites();
  }

  async reconcile(key: string, signal?: AbortSignal): Promise<ReconcileResult> {
    const { api, logger } = this.deps;
    const { namespace, name } = splitKey(key);
    if (this.excluded.has(namespace)) {
      if (!this.leftAlone.has(key)) {
        this.leftAlone.add(key);
        logger.info(
          { site: key, namespace },
          'StaticSite in an excluded namespace (the webhooks skip it too): left alone',
        );
      }
      return {};
    }
    let site: StaticSiteV1;
    try {
      site = this.cachedSite(key) ?? (await api.get<StaticSiteV1>(STATICSITES, namespace, name, { signal }));
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await this.gone(key, signal);
      return {};
    }
    const { shard } = this.deps.config;
    if (shard !== undefined) {
      // Another shard's, or not assigned yet: not ours to touch.
      if (shardOf(site) !== shard) return {};
      if (isDraining(site)) return this.handOver(key, site, signal);
    }
    if (site.metadata.deletionTimestamp) return this.finalize(key, site, signal);
    if (!site.metadata.finalizers?.includes(FINALIZER)) site = await this.addFinalizer(site, signal);
    return this.converge(key, site, signal);
  }

  /**
   * The drain handshake's answer: this shard lets the site go by removing its shard and drain labels,
   * conditional on the version it saw. Nothing of this shard's works on the site from here on (the
   * queue runs one reconcile of a key at a time, so none is in flight), and the mutating webhook
   * labels it with its new shard in this same write.
   */
  private async handOver(key: string, site: StaticSiteV1, signal?: AbortSignal): Promise<ReconcileResult> {
    const labels = { ...site.metadata.labels };
    delete labels[SHARD_LABEL];
    delete labels[DRAIN_LABEL];
    try {
      await this.writeSite(
        this.deps.api.update(STATICSITES, { ...site, metadata: { ...site.metadata, labels } }, { signal }),
      );
    } catch (error) {
      if (isNotFound(error)) return {};
      throw error;
    }
    this.deps.logger.info({ site: key, shard: this.deps.config.shard }, 'handed a drained site over to another shard');
    return {};
  }

  /** Gone (perhaps in a watch gap): no record outlives the site, nor its claims. Idempotent. */
  private async gone(key: string, signal?: AbortSignal): Promise<void> {
    const { records, claims, logger } = this.deps;
    this.writes.forget(KIND_SITE, key);
    const outcome = await records.remove(key);
    if (outcome === 'removed') logger.info({ site: key }, 'removed the record of a site that no longer exists');
    // Its claims are stale now (no site of this name exists): let them go.
    for (const claim of claims.cachedClaimsOfKey(key)) {
      if (await claims.deleteClaim(claim, { signal })) {
        logger.info(
          { site: key, claim: claim.metadata.name },
          'released the hostname claim of a site that no longer exists',
        );
      }
    }
  }

  /**
   * The site as the informer has it, when that shows our own last write to it (or we made none it
   * has not shown): a copy, so nothing here changes the cache. Otherwise undefined, and the caller
   * reads the API server: a cache that does not have the site (deleted, or not delivered yet) is
   * confirmed there before a record is removed, and a cache behind our write would only earn a 409
   * Conflict on the next write.
   */
  private cachedSite(key: string): StaticSiteV1 | undefined {
    const cached = this.deps.sites?.get(key);
    if (!cached || !this.writes.isCurrent(KIND_SITE, cached)) return undefined;
    return structuredClone(cached);
  }

  /**
   * A write to the site, recorded as our own the moment its answer arrives: before the watch event
   * that echoes it can be handled, so that event is known for an echo.
   */
  private async writeSite(write: Promise<StaticSiteV1>): Promise<StaticSiteV1> {
    const written = await write;
    this.writes.wrote(KIND_SITE, written);
    return written;
  }

  private async finalize(key: string, site: StaticSiteV1, signal?: AbortSignal): Promise<ReconcileResult> {
    const { api, records, events, logger } = this.deps;
    if (!site.metadata.finalizers?.includes(FINALIZER)) return {};
    await this.warnOnFailure(site, { reason: 'RecordDeleteFailed', doing: 'deleting the external record' }, () =>
      records.remove(key),
    );
    // The record is gone: now the hostname may go to another site.
    await this.warnOnFailure(site, { reason: 'ClaimReleaseFailed', doing: 'releasing the hostname claim' }, () =>
      this.releaseClaims(site, undefined, signal),
    );
    const updated: StaticSiteV1 = {
      ...site,
      metadata: { ...site.metadata, finalizers: site.metadata.finalizers.filter((f) => f !== FINALIZER) },
    };
    try {
      await api.update(STATICSITES, updated, { signal });
    } catch (error) {
      if (isNotFound(error)) return {};
      events.event(site, 'Warning', 'FinalizerFailed', `removing the finalizer failed: ${errorMessage(error)}`);
      throw error;
    }
    this.writes.forget(KIND_SITE, key);
    logger.info({ site: key }, 'finalized: external record deleted, finalizer removed');
    events.event(
      site,
      'Normal',
      'Finalized',
      `Deleted the external record of ${siteHostname(site, this.deps.config.baseDomain)} and removed finalizer ${FINALIZER}`,
    );
    return {};
  }

  private async addFinalizer(site: StaticSiteV1, signal?: AbortSignal): Promise<StaticSiteV1> {
    const updated: StaticSiteV1 = {
      ...site,
      metadata: { ...site.metadata, finalizers: [...(site.metadata.finalizers ?? []), FINALIZER] },
    };
    return this.warnOnFailure(site, { reason: 'FinalizerFailed', doing: `adding finalizer ${FINALIZER}` }, () =>
      this.writeSite(this.deps.api.update(STATICSITES, updated, { signal })),
    );
  }

  /** Runs `action`; its failure is a Warning Event `reason` ("<doing> failed: <error>") and is thrown on. */
  private async warnOnFailure<T>(
    site: StaticSiteV1,
    warning: { reason: string; doing: string },
    action: () => Promise<T>,
  ): Promise<T> {
    try {
      return await action();
    } catch (error) {
      this.deps.events.event(site, 'Warning', warning.reason, `${warning.doing} failed: ${errorMessage(error)}`);
      throw error;
    }
  }

  /**
   * One pass over a live site: the children, then (unless a child write failed) the hostname claim
   * and the record, each step's Events emitted as it ends; then the status, written once, from all
   * the problems found; then the pass's verdict for the queue.
   */
  private async converge(key: string, site: StaticSiteV1, signal?: AbortSignal): Promise<ReconcileResult> {
    const children = await this.ensureChildren(site, signal);
    this.emit(site, children);
    const outcomes: StepOutcome[] = [children];
    const ready = this.childrenReadiness(site, children.objects);
    if (!children.failed) {
      const record = externalRecordFor(site, this.deps.config.baseDomain, ready.via);
      // The hostname first: a record is published, or kept, only for a hostname this site holds.
      const claim = await this.claimHostname(key, site, record.hostname, signal);
      this.emit(site, claim);
      // Only once the name reaches the site: a child's readiness hook may say it does not yet.
      const blocked = children.problems.length > 0 || claim.problems.length > 0 || !ready.reachable;
      const published = await this.convergeRecord({ key, site, record, verdict: claim.verdict, blocked }, signal);
      this.emit(site, published);
      outcomes.push(claim, published);
    }
    const problems = outcomes.flatMap((o) => o.problems);
    await this.writePassStatus(site, { children, problems, ready }, signal);
    if (children.failed) throw children.failed.error;
    // A lost hostname is no failure of ours: the site waits, without backoff, for the holder to let
    // go; the claim's deletion re-queues it (event handlers), the resync is the safety net.
    const failures = [
      ...problems.filter((p) => p.reason !== 'HostnameConflict').map((p) => p.message),
      ...outcomes.flatMap((o) => o.failures),
    ];
    if (failures.length > 0) throw new ReconcileProblem(failures.join('; '));
    if (children.terminating) return { requeueAfterMs: this.deps.config.terminatingRequeueMs ?? 1000 };
    return {};
  }

  /** What the children's readiness hooks say of the site, each kind of the registry asked in its order. */
  private childrenReadiness(site: StaticSiteV1, objects: ReadonlyMap<string, KubeObject>): ChildrenReadiness {
    const kinds = this.deps.children.map(({ kind }) => kind);
    return childrenReadiness(kinds, objects, site, { gateways: this.deps.gateways });
  }

  private emit(site: StaticSiteV1, outcome: StepOutcome): void {
    for (const e of outcome.events) this.deps.events.event(site, e.type, e.reason, e.message);
  }

  /**
   * Step 1, the children: each kind of the registry, in order, through ensure-with-mutate. A child
   * another controller (or none) holds is a ChildConflict problem, and the next kind is ensured; a
   * failed write stops the step.
   */
  private async ensureChildren(site: StaticSiteV1, signal?: AbortSignal): Promise<ChildrenOutcome> {
    const outcome: ChildrenOutcome = { ...stepOutcome(), objects: new Map(), terminating: false };
    const name = childName(site);
    for (const { kind, cache } of this.deps.children) {
      if (kind.unserved) continue;
      const label = `${kind.type.kind} "${name}"`;
      let result: EnsureResult<KubeObject>;
      try {
        result = await ensureChild(kind, site, name, {
          api: this.deps.api,
          cache,
          options: this.deps.config,
          call: { signal },
          wrote: (object) => this.writes.wrote(kind.type.kind, object),
        });
      } catch (error) {
        outcome.events.push({ type: 'Warning', reason: 'ReconcileError', message: `${label}: ${errorMessage(error)}` });
        // A conflict is routine (the retry re-reads); any other failure the user should see in status.
        const shown = isConflict(error) ? undefined : problem('ChildFailed', `${label}: ${serverWords(error)}`);
        outcome.failed = { error, problem: shown };
        return outcome;
      }
      if (result.outcome === 'created') outcome.events.push(normal('Created', `Created ${label}`));
      if (result.outcome === 'updated') outcome.events.push(normal('Updated', `Updated ${label}`));
      if (result.outcome === 'terminating') outcome.terminating = true;
      if (result.outcome !== 'conflict') {
        outcome.objects.set(kind.type.kind, result.object);
        continue;
      }
      const owner = result.controller ? `${result.controller.kind} "${result.controller.name}"` : 'no controller';
      const message = `${label} already exists and is controlled by ${owner}, not by this StaticSite; it is left alone`;
      outcome.problems.push(problem('ChildConflict', message));
      outcome.events.push({ type: 'Warning', reason: 'ChildConflict', message });
    }
    return outcome;
  }

  /** Step 2, the hostname claim: the verdict, or a ClaimFailed problem. */
  private async claimHostname(
    key: string,
    site: StaticSiteV1,
    hostname: string,
    signal?: AbortSignal,
  ): Promise<ClaimOutcome> {
    const outcome: ClaimOutcome = stepOutcome();
    try {
      outcome.verdict = await this.deps.claims.claim(hostname, site, { signal });
    } catch (error) {
      const message = `claiming hostname ${hostname} failed: ${serverWords(error)}`;
      outcome.problems.push(problem('ClaimFailed', message));
      outcome.events.push({ type: 'Warning', reason: 'ClaimFailed', message });
    }
    if (outcome.verdict?.outcome === 'claimed') this.deps.logger.info({ site: key, hostname }, 'claimed hostname');
    return outcome;
  }

  /**
   * Step 3, the external record: withdrawn when another site holds the hostname; published when this
   * site holds it and nothing before stood in the way; then the claims on older hostnames released.
   */
  private async convergeRecord(pass: RecordPass, signal?: AbortSignal): Promise<StepOutcome> {
    if (pass.verdict?.outcome === 'lost') return this.withdrawRecord(pass, pass.verdict.holder, signal);
    if (!pass.verdict || pass.blocked) return stepOutcome();
    const { key, site, record } = pass;
    const outcome = stepOutcome();
    try {
      recordSets(record); // a Gateway without an address fails here, for every store alike
      const published = await this.deps.records.publish(key, record);
      if (published !== 'unchanged') {
        outcome.events.push(normal('RecordPublished', `Published ${record.hostname} -> ${describeTarget(record)}`));
      }
    } catch (error) {
      const message = `publishing the external record ${record.hostname} failed: ${errorMessage(error)}`;
      outcome.problems.push(problem('RecordFailed', message));
      outcome.events.push({ type: 'Warning', reason: 'RecordFailed', message });
      return outcome;
    }
    // The record names this hostname now: the claims on older ones can go.
    await this.releaseOlderClaims(site, record.hostname, outcome, signal);
    return outcome;
  }

  /** The hostname is held by `holder`: this site's record goes, and with it the claims on older hostnames. */
  private async withdrawRecord(pass: RecordPass, holder: string, signal?: AbortSignal): Promise<StepOutcome> {
    const { key, site, record } = pass;
    const outcome = stepOutcome();
    const message = `hostname ${record.hostname} is held by StaticSite ${holder}`;
    outcome.events.push({ type: 'Warning', reason: 'HostnameConflict', message });
    // A record published before (an older hostname, or before claims existed) must not stay.
    let removed = false;
    try {
      removed = (await this.deps.records.remove(key)) === 'removed';
    } catch (error) {
      const failed = `removing the external record failed: ${errorMessage(error)}`;
      outcome.problems.push(problem('RecordFailed', failed));
      outcome.events.push({ type: 'Warning', reason: 'RecordFailed', message: failed });
    }
    if (removed) outcome.events.push(normal('RecordRemoved', `Removed the external record: ${message}`));
    const recordLeft = outcome.problems.length > 0;
    outcome.problems.push(problem('HostnameConflict', message));
    // No record left: claims this site holds on older hostnames would only block other sites.
    if (!recordLeft) await this.releaseOlderClaims(site, record.hostname, outcome, signal);
    return outcome;
  }

  /** Releases the claims on hostnames other than `keep`; a failure is a Warning and a failure of the pass. */
  private async releaseOlderClaims(
    site: StaticSiteV1,
    keep: string,
    outcome: StepOutcome,
    signal?: AbortSignal,
  ): Promise<void> {
    try {
      await this.releaseClaims(site, keep, signal);
    } catch (error) {
      const failure = `releasing an older hostname claim failed: ${errorMessage(error)}`;
      outcome.failures.push(failure);
      outcome.events.push({ type: 'Warning', reason: 'ClaimReleaseFailed', message: failure });
    }
  }

  /**
   * Releases this site's claims, except the one on `keep`: those the claims cache shows for the
   * site's uid, and the one on its current hostname (read fresh, in case the cache is behind).
   * Only claims held by this very site are deleted, each with its uid and resourceVersion as
   * preconditions.
   */
  private async releaseClaims(site: StaticSiteV1, keep: string | undefined, signal?: AbortSignal): Promise<void> {
    const { claims, logger, config } = this.deps;
    const hostnames = new Set(claims.cachedHostnamesOf(site));
    if (keep === undefined) hostnames.add(siteHostname(site, config.baseDomain));
    else hostnames.delete(keep);
    for (const hostname of hostnames) {
      const outcome = await claims.release(hostname, site, { signal });
      if (outcome === 'released') logger.info({ site: objectKey(site), hostname }, 'released hostname claim');
    }
  }

  /**
   * Step 4, the status, once per pass: Ready from the first problem found, else from the children's
   * readiness hooks; the URL unless a child says the hostname does not reach the site. After a failed
   * child write it shows that failure (ChildFailed), and the pass fails with the child's error
   * whatever this write does; after a routine 409 Conflict it is left alone.
   */
  private async writePassStatus(
    site: StaticSiteV1,
    pass: { children: ChildrenOutcome; problems: Readiness[]; ready: ChildrenReadiness },
    signal?: AbortSignal,
  ): Promise<void> {
    const { failed } = pass.children;
    if (failed && !failed.problem) return;
    const problem = failed ? failed.problem : pass.problems[0];
    const written = this.writeStatus(site, { ready: pass.ready, problem }, signal);
    await (failed ? written.catch(() => {}) : written);
  }

  /** Writes the status through /status, only when it differs from the live one. */
  private async writeStatus(
    site: StaticSiteV1,
    pass: { ready: ChildrenReadiness; problem: Readiness | undefined },
    signal?: AbortSignal,
  ): Promise<void> {
    const now = formatTime(this.deps.clock.now());
    const { ready, problem } = pass;
    const url = ready.reachable ? `http://${siteHostname(site, this.deps.config.baseDomain)}/` : undefined;
    const status = desiredStatus({ site, children: ready, problem, url, now });
    if (statusUnchanged(site.status, status)) return;
    await this.warnOnFailure(site, { reason: 'StatusUpdateFailed', doing: 'updating status' }, () =>
      this.writeSite(this.deps.api.updateStatus(STATICSITES, { ...site, status }, { signal })),
    );
  }
}
