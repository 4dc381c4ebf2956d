import { FINALIZER, STATICSITES, type StaticSiteV1, siteHostname } from '../../api/index.ts';
import type { KubeApi } from '../../kube/api-client.ts';
import { ApiError, errorMessage, isConflict, isNotFound } from '../../kube/api-error.ts';
import { type Clock, formatTime } from '../../kube/clock.ts';
import {
  type ConfigMap,
  type Deployment,
  type KubeObject,
  objectKey,
  type Service,
  splitKey,
} from '../../kube/objects.ts';
import type { ClaimVerdict, HostnameClaims } from '../claims/hostname-claims.ts';
import type { EventRecorder } from '../observability/events.ts';
import type { Logger } from '../observability/logger.ts';
import type { ExternalRecord, RecordStore } from '../records/record-store.ts';
import {
  type ChildKind,
  type ChildOptions,
  childName,
  configMapChild,
  deploymentChild,
  serviceChild,
} from './children.ts';
import { type ChildLookup, type EnsureResult, ensureChild } from './ensure.ts';
import { desiredStatus, type Readiness, statusUnchanged } from './status.ts';

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
}

export interface ReconcilerDeps {
  api: KubeApi;
  caches: {
    /**
     * The sites informer: a reconcile reads its site here and asks the API server only when the
     * cache has no such site or is behind this controller's own last write to it. Without it every
     * reconcile GETs its site.
     */
    sites?: ChildLookup<StaticSiteV1>;
    configMaps: ChildLookup<ConfigMap>;
    deployments: ChildLookup<Deployment>;
    services: ChildLookup<Service>;
  };
  records: RecordStore;
  /** Hostname claims: a site publishes a record only for a hostname it holds. */
  claims: HostnameClaims;
  events: EventRecorder;
  clock: Clock;
  logger: Logger;
  config: ReconcilerConfig;
  /** Told about every object this controller wrote (for echo suppression). */
  wrote?: (kind: string, object: KubeObject) => void;
}

export function externalRecordFor(site: StaticSiteV1, baseDomain: string): ExternalRecord {
  const { name, namespace } = site.metadata;
  return {
    hostname: siteHostname(site, baseDomain),
    service: `${childName(site)}.${namespace}.svc.cluster.local`,
    port: 80,
    site: `${namespace}/${name}`,
  };
}

/**
 * Converges one StaticSite (docs/controller.md): reads the site fresh, finalizes it when it is
 * being deleted, otherwise makes sure of the finalizer, the three children, the external record
 * and the status. Throws on any failure; the queue retries with backoff.
 */
export class SiteReconciler {
  private readonly deps: ReconcilerDeps;
  private readonly excluded: ReadonlySet<string>;
  /** Sites in an excluded namespace already logged (once per site). */
  private readonly leftAlone = new Set<string>();
  /** The resourceVersion of this controller's last write to each site, until the cache has caught up with it. */
  private readonly lastWrite = new Map<string, string>();

  constructor(deps: ReconcilerDeps) {
    this.deps = deps;
    this.excluded = new Set(deps.config.excludedNamespaces ?? []);
  }

  async reconcile(key: string, signal?: AbortSignal): Promise<ReconcileResult> {
    const { api, records, claims, logger } = this.deps;
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
      this.lastWrite.delete(key);
      // Gone (perhaps in a watch gap): make sure no record outlives it. Idempotent.
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
      return {};
    }
    if (site.metadata.deletionTimestamp) return this.finalize(key, site, signal);
    if (!site.metadata.finalizers?.includes(FINALIZER)) site = await this.addFinalizer(site, signal);
    return this.converge(key, site, signal);
  }

  /**
   * The site as the informer has it, when that is at least as new as our own last write (the same
   * resourceVersion, or no write of ours to compare with): a copy, so nothing here changes the
   * cache. Otherwise undefined, and the caller reads the API server: a cache that does not have the
   * site (deleted, or not delivered yet) is confirmed there before a record is removed, and a cache
   * behind our write would only earn a 409 Conflict on the next write.
   */
  private cachedSite(key: string): StaticSiteV1 | undefined {
    const cached = this.deps.caches.sites?.get(key);
    if (!cached) return undefined;
    const written = this.lastWrite.get(key);
    if (written !== undefined && cached.metadata.resourceVersion !== written) return undefined;
    this.lastWrite.delete(key);
    return structuredClone(cached);
  }

  private wroteSite(site: StaticSiteV1): void {
    const rv = site.metadata.resourceVersion;
    if (rv) this.lastWrite.set(objectKey(site), rv);
    this.deps.wrote?.('StaticSite', site);
  }

  private async finalize(key: string, site: StaticSiteV1, signal?: AbortSignal): Promise<ReconcileResult> {
    const { api, records, events, logger } = this.deps;
    if (!site.metadata.finalizers?.includes(FINALIZER)) return {};
    try {
      await records.remove(key);
    } catch (error) {
      events.event(
        site,
        'Warning',
        'RecordDeleteFailed',
        `deleting the external record failed: ${errorMessage(error)}`,
      );
      throw error;
    }
    // The record is gone: now the hostname may go to another site.
    try {
      await this.releaseClaims(site, undefined, signal);
    } catch (error) {
      events.event(
        site,
        'Warning',
        'ClaimReleaseFailed',
        `releasing the hostname claim failed: ${errorMessage(error)}`,
      );
      throw error;
    }
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
    this.lastWrite.delete(key);
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
    try {
      const written = await this.deps.api.update(STATICSITES, updated, { signal });
      this.wroteSite(written);
      return written;
    } catch (error) {
      this.deps.events.event(
        site,
        'Warning',
        'FinalizerFailed',
        `adding finalizer ${FINALIZER} failed: ${errorMessage(error)}`,
      );
      throw error;
    }
  }

  private async converge(key: string, site: StaticSiteV1, signal?: AbortSignal): Promise<ReconcileResult> {
    const { caches, records, events, config } = this.deps;
    const problems: Readiness[] = [];
    let terminating = false;
    let deployment: Deployment | undefined;
    const ensure = async <T extends KubeObject>(kind: ChildKind<T>, cache: ChildLookup<T>) => {
      let result: EnsureResult<T>;
      try {
        result = await ensureChild(kind, site, childName(site), {
          api: this.deps.api,
          cache,
          options: config,
          call: { signal },
          wrote: (object) => this.deps.wrote?.(kind.type.kind, object),
        });
      } catch (error) {
        const what = `${kind.type.kind} "${childName(site)}"`;
        events.event(site, 'Warning', 'ReconcileError', `${what}: ${errorMessage(error)}`);
        // A conflict is routine (the retry re-reads); any other failure the user should see in status.
        if (!isConflict(error)) {
          const reason = error instanceof ApiError ? error.serverMessage : errorMessage(error);
          const problem: Readiness = { status: 'False', reason: 'ChildFailed', message: `${what}: ${reason}` };
          const url = `http://${siteHostname(site, config.baseDomain)}/`;
          await this.writeStatus(site, deployment, problem, url, signal).catch(() => {});
        }
        throw error;
      }
      const label = `${kind.type.kind} "${childName(site)}"`;
      if (result.outcome === 'created') events.event(site, 'Normal', 'Created', `Created ${label}`);
      if (result.outcome === 'updated') events.event(site, 'Normal', 'Updated', `Updated ${label}`);
      if (result.outcome === 'terminating') terminating = true;
      if (result.outcome === 'conflict') {
        const owner = result.controller ? `${result.controller.kind} "${result.controller.name}"` : 'no controller';
        const message = `${label} already exists and is controlled by ${owner}, not by this StaticSite; it is left alone`;
        problems.push({ status: 'False', reason: 'ChildConflict', message });
        events.event(site, 'Warning', 'ChildConflict', message);
        return undefined;
      }
      return result.object;
    };
    await ensure(configMapChild, caches.configMaps);
    deployment = await ensure(deploymentChild, caches.deployments);
    await ensure(serviceChild, caches.services);

    const record = externalRecordFor(site, config.baseDomain);
    // The hostname first: a record is published, or kept, only for a hostname this site holds.
    let verdict: ClaimVerdict | undefined;
    let releaseFailure: string | undefined;
    try {
      verdict = await this.deps.claims.claim(record.hostname, site, { signal });
    } catch (error) {
      const reason = error instanceof ApiError ? error.serverMessage : errorMessage(error);
      const message = `claiming hostname ${record.hostname} failed: ${reason}`;
      problems.push({ status: 'False', reason: 'ClaimFailed', message });
      events.event(site, 'Warning', 'ClaimFailed', message);
    }
    if (verdict?.outcome === 'claimed') {
      this.deps.logger.info({ site: key, hostname: record.hostname }, 'claimed hostname');
    }
    if (verdict?.outcome === 'lost') {
      const message = `hostname ${record.hostname} is held by StaticSite ${verdict.holder}`;
      events.event(site, 'Warning', 'HostnameConflict', message);
      // A record published before (an older hostname, or before claims existed) must not stay.
      let removed = false;
      try {
        removed = (await records.remove(key)) === 'removed';
      } catch (error) {
        const failed = `removing the external record failed: ${errorMessage(error)}`;
        problems.push({ status: 'False', reason: 'RecordFailed', message: failed });
        events.event(site, 'Warning', 'RecordFailed', failed);
      }
      if (removed) events.event(site, 'Normal', 'RecordRemoved', `Removed the external record: ${message}`);
      problems.push({ status: 'False', reason: 'HostnameConflict', message });
      // No record left: claims this site holds on older hostnames would only block other sites.
      if (problems.every((p) => p.reason !== 'RecordFailed')) {
        try {
          await this.releaseClaims(site, record.hostname, signal);
        } catch (error) {
          releaseFailure = `releasing an older hostname claim failed: ${errorMessage(error)}`;
          events.event(site, 'Warning', 'ClaimReleaseFailed', releaseFailure);
        }
      }
    } else if (verdict && problems.length === 0) {
      let published = false;
      try {
        const outcome = await records.publish(key, record);
        published = true;
        if (outcome !== 'unchanged') {
          events.event(site, 'Normal', 'RecordPublished', `Published ${record.hostname} -> ${record.service}`);
        }
      } catch (error) {
        const message = `publishing the external record ${record.hostname} failed: ${errorMessage(error)}`;
        problems.push({ status: 'False', reason: 'RecordFailed', message });
        events.event(site, 'Warning', 'RecordFailed', message);
      }
      // The record names this hostname now: the claims on older ones can go.
      if (published) {
        try {
          await this.releaseClaims(site, record.hostname, signal);
        } catch (error) {
          releaseFailure = `releasing an older hostname claim failed: ${errorMessage(error)}`;
          events.event(site, 'Warning', 'ClaimReleaseFailed', releaseFailure);
        }
      }
    }

    await this.writeStatus(site, deployment, problems[0], `http://${record.hostname}/`, signal);
    // A lost hostname is no failure of ours: the site waits, without backoff, for the holder to let
    // go; the claim's deletion re-queues it (event handlers), the resync is the safety net.
    const failures = problems.filter((p) => p.reason !== 'HostnameConflict').map((p) => p.message);
    if (releaseFailure) failures.push(releaseFailure);
    if (failures.length > 0) throw new ReconcileProblem(failures.join('; '));
    if (terminating) return { requeueAfterMs: config.terminatingRequeueMs ?? 1000 };
    return {};
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

  private async writeStatus(
    site: StaticSiteV1,
    deployment: Deployment | undefined,
    problem: Readiness | undefined,
    url: string,
    signal?: AbortSignal,
  ): Promise<void> {
    const now = formatTime(this.deps.clock.now());
    const status = desiredStatus({ site, deployment, problem, url, now });
    if (statusUnchanged(site.status, status)) return;
    try {
      const written = await this.deps.api.updateStatus(STATICSITES, { ...site, status }, { signal });
      this.wroteSite(written);
    } catch (error) {
      this.deps.events.event(site, 'Warning', 'StatusUpdateFailed', `updating status failed: ${errorMessage(error)}`);
      throw error;
    }
  }
}
