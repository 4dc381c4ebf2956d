import { defaultHostname, FINALIZER, STATICSITES, type StaticSiteV1 } from '../../api/index.ts';
import type { KubeApi } from '../../kube/api-client.ts';
import { ApiError, errorMessage, isConflict, isNotFound } from '../../kube/api-error.ts';
import { type Clock, formatTime } from '../../kube/clock.ts';
import { type ConfigMap, type Deployment, type KubeObject, type Service, splitKey } from '../../kube/objects.ts';
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
}

export interface ReconcilerDeps {
  api: KubeApi;
  caches: {
    configMaps: ChildLookup<ConfigMap>;
    deployments: ChildLookup<Deployment>;
    services: ChildLookup<Service>;
  };
  records: RecordStore;
  events: EventRecorder;
  clock: Clock;
  logger: Logger;
  config: ReconcilerConfig;
  /** Told about every object this controller wrote (for echo suppression). */
  wrote?: (kind: string, object: KubeObject) => void;
}

export function siteHostname(site: StaticSiteV1, baseDomain: string): string {
  // A stored site always has a name and a namespace, so the default always exists.
  return site.spec.hostname ?? defaultHostname(site.metadata.name, site.metadata.namespace, baseDomain) ?? '';
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

  constructor(deps: ReconcilerDeps) {
    this.deps = deps;
  }

  async reconcile(key: string, signal?: AbortSignal): Promise<ReconcileResult> {
    const { api, records, logger } = this.deps;
    const { namespace, name } = splitKey(key);
    let site: StaticSiteV1;
    try {
      site = await api.get<StaticSiteV1>(STATICSITES, namespace, name, { signal });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      // Gone (perhaps in a watch gap): make sure no record outlives it. Idempotent.
      const outcome = await records.remove(key);
      if (outcome === 'removed') logger.info({ site: key }, 'removed the record of a site that no longer exists');
      return {};
    }
    if (site.metadata.deletionTimestamp) return this.finalize(key, site, signal);
    if (!site.metadata.finalizers?.includes(FINALIZER)) site = await this.addFinalizer(site, signal);
    return this.converge(key, site, signal);
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
      this.deps.wrote?.('StaticSite', written);
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
    if (problems.length === 0) {
      try {
        const outcome = await records.publish(key, record);
        if (outcome !== 'unchanged') {
          events.event(site, 'Normal', 'RecordPublished', `Published ${record.hostname} -> ${record.service}`);
        }
      } catch (error) {
        const message = `publishing the external record ${record.hostname} failed: ${errorMessage(error)}`;
        problems.push({ status: 'False', reason: 'RecordFailed', message });
        events.event(site, 'Warning', 'RecordFailed', message);
      }
    }

    await this.writeStatus(site, deployment, problems[0], `http://${record.hostname}/`, signal);
    if (problems.length > 0) throw new ReconcileProblem(problems.map((p) => p.message).join('; '));
    if (terminating) return { requeueAfterMs: config.terminatingRequeueMs ?? 1000 };
    return {};
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
      this.deps.wrote?.('StaticSite', written);
    } catch (error) {
      this.deps.events.event(site, 'Warning', 'StatusUpdateFailed', `updating status failed: ${errorMessage(error)}`);
      throw error;
    }
  }
}
