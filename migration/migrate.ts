/**
 * Storage migration of one custom resource, as the in-tree StorageVersionMigration controller does it
 * (k8s.io/kubernetes pkg/controller/storageversionmigrator): every object is written back unchanged at
 * the storage version, then `status.storedVersions` is set to the storage version alone.
 *
 * The write is a merge patch carrying only the object's resourceVersion. The API server applies it,
 * encodes the result at the storage version and compares it with the bytes in etcd
 * (k8s.io/apiserver pkg/storage/etcd3/store.go GuaranteedUpdate): an object stored at an older
 * version differs, so it is written again; an object already at the storage version is left alone
 * (same resourceVersion, no etcd write, no watch event). That makes a second run cheap, so a run that
 * stopped is resumed by running again from the start (docs/storage-migration.md).
 */

import { setTimeout as delay } from 'node:timers/promises';
import type { KubeApi } from '../kube/api-client.ts';
import { ApiError, errorMessage, isConflict, isGone, isNotFound } from '../kube/api-error.ts';
import type { KubeList, KubeObject } from '../kube/objects.ts';
import { CUSTOM_RESOURCE_DEFINITIONS } from '../kube/resources.ts';
import {
  readStorageState,
  type StorageState,
  type StoredCrd,
  storageStateOf,
  versionsToRetire,
} from './storage-state.ts';

/** How far a run got: pages listed, objects seen, written back, gone meanwhile, conflicts retried. */
export interface Progress {
  pages: number;
  listed: number;
  rewritten: number;
  gone: number;
  conflicts: number;
}

export interface MigrateOptions {
  crdName: string;
  /** Waits between retries of a 429; default a timer. */
  sleep?: (ms: number) => Promise<void>;
  /** `limit` of each list page. */
  pageSize: number;
  /** Called after each page. */
  onProgress?: (progress: Progress, state: StorageState) => void;
  signal?: AbortSignal;
}

export type MigrateResult =
  | { outcome: 'nothing-to-do'; state: StorageState }
  | { outcome: 'migrated'; state: StorageState; progress: Progress; storedVersions: string[] };

/** A run that stopped: what it did, and the storedVersions it left untouched. */
export class MigrationError extends Error {
  override name = 'MigrationError';
  readonly progress: Progress;
  readonly storedVersions: string[];

  constructor(message: string, progress: Progress, storedVersions: string[]) {
    super(message);
    this.progress = progress;
    this.storedVersions = storedVersions;
  }
}

const CONFLICT_RETRIES = 5;
/**
 * 429 TooManyRequests: API priority and fairness, or a resource whose storage is re-initializing after
 * a CRD update ("storage is (re)initializing", retryAfterSeconds 1). Waited out, this many times.
 */
const THROTTLED_RETRIES = 10;
const THROTTLED_WAIT_MS = 1000;
/** A continue token outlives an etcd compaction only so long; after that the listing starts over. */
const LIST_RESTARTS = 3;

const defaultSleep = (ms: number) => delay(ms);

/** A failed call as the method, the path, the HTTP code with its reason if any, and the server's words. */
function failureText(error: unknown): string {
  if (!(error instanceof ApiError)) return errorMessage(error);
  const reason = error.reason ? ` ${error.reason}` : '';
  return `${error.method} ${error.path}: HTTP ${error.code}${reason}: ${error.serverMessage}`;
}

const emptyProgress = (): Progress => ({ pages: 0, listed: 0, rewritten: 0, gone: 0, conflicts: 0 });

/** Every object of the resource, page by page (`limit`/`continue`), at the storage version. */
export async function* pages(
  api: KubeApi,
  state: StorageState,
  options: { pageSize: number; signal?: AbortSignal; sleep?: (ms: number) => Promise<void> },
): AsyncGenerator<KubeObject[]> {
  const call = options.signal ? { signal: options.signal } : {};
  let token: string | undefined;
  do {
    const query = { limit: options.pageSize, ...(token && { continue: token }) };
    const page: KubeList = await patiently(
      () => api.list(state.resource, '', query, call),
      options.sleep ?? defaultSleep,
    );
    token = page.metadata.continue || undefined;
    yield page.items;
  } while (token);
}

/** Counts the objects a run would write back, reading them as the run would (so a broken conversion shows). */
export async function countObjects(api: KubeApi, state: StorageState, pageSize: number): Promise<number> {
  let count = 0;
  for await (const items of pages(api, state, { pageSize })) count += items.length;
  return count;
}

/** `call`, again after a pause while the server answers 429. */
async function patiently<T>(call: () => Promise<T>, sleep: (ms: number) => Promise<void>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 429) || attempt >= THROTTLED_RETRIES) throw error;
      await sleep(THROTTLED_WAIT_MS);
    }
  }
}

/** Writes one object back at the storage version; `gone` when it was deleted meanwhile. */
async function rewrite(api: KubeApi, run: Run, object: KubeObject) {
  const { namespace = '', name = '' } = object.metadata;
  const type = run.state.resource;
  let resourceVersion = object.metadata.resourceVersion;
  for (let attempt = 0; ; attempt++) {
    try {
      const patch = { metadata: { resourceVersion } };
      await patiently(() => api.mergePatch(type, namespace, name, { patch }), run.sleep);
      return 'rewritten' as const;
    } catch (error) {
      if (isNotFound(error)) return 'gone' as const;
      if (!isConflict(error) || attempt >= CONFLICT_RETRIES) throw error;
      run.progress.conflicts++;
      try {
        resourceVersion = (await patiently(() => api.get(type, namespace, name), run.sleep)).metadata.resourceVersion;
      } catch (reread) {
        if (isNotFound(reread)) return 'gone' as const;
        throw reread;
      }
    }
  }
}

/** One run's state, options and counts. */
interface Run {
  state: StorageState;
  options: MigrateOptions;
  progress: Progress;
  sleep: (ms: number) => Promise<void>;
}

/** One pass over every object; a continue token that expired (410) starts the listing over. */
async function rewriteAll(api: KubeApi, run: Run) {
  const { state, options, progress } = run;
  for (let restarts = 0; ; restarts++) {
    try {
      for await (const items of pages(api, state, { ...options, sleep: run.sleep })) {
        progress.pages++;
        for (const object of items) {
          if (options.signal?.aborted) throw new Error('interrupted');
          progress.listed++;
          progress[await rewrite(api, run, object)]++;
        }
        options.onProgress?.({ ...progress }, state);
      }
      return;
    } catch (error) {
      if (!isGone(error) || restarts >= LIST_RESTARTS) throw error;
    }
  }
}

/**
 * Sets storedVersions to the storage version alone, only if the CRD's spec is still the one the
 * migration started from (same generation, so the same storage version): the resourceVersion of that
 * read is the patch's precondition.
 */
async function trimStoredVersions(api: KubeApi, started: StorageState): Promise<string[]> {
  for (let attempt = 0; ; attempt++) {
    const now = await readStorageState(api, started.crd);
    if (now.generation !== started.generation || now.storageVersion !== started.storageVersion) {
      throw new Error(
        `CustomResourceDefinition ${started.crd} changed during the migration (generation ${started.generation} -> ${now.generation}): run again`,
      );
    }
    try {
      const patched = await api.mergePatch<StoredCrd>(CUSTOM_RESOURCE_DEFINITIONS, '', started.crd, {
        subresource: 'status',
        patch: { metadata: { resourceVersion: now.resourceVersion }, status: { storedVersions: [now.storageVersion] } },
      });
      return storageStateOf(patched).storedVersions;
    } catch (error) {
      if (!isConflict(error) || attempt >= CONFLICT_RETRIES) throw error;
    }
  }
}

/**
 * Migrates every object of `options.crdName` to its storage version, then trims storedVersions. Any
 * failure but a conflict (retried) or a deletion stops the run with a MigrationError, storedVersions
 * untouched.
 */
export async function migrateStorage(api: KubeApi, options: MigrateOptions): Promise<MigrateResult> {
  const state = await readStorageState(api, options.crdName, options.signal);
  if (versionsToRetire(state).length === 0) return { outcome: 'nothing-to-do', state };
  const progress = emptyProgress();
  try {
    await rewriteAll(api, { state, options, progress, sleep: options.sleep ?? defaultSleep });
    const storedVersions = await trimStoredVersions(api, state);
    return { outcome: 'migrated', state, progress, storedVersions };
  } catch (error) {
    throw new MigrationError(failureText(error), progress, state.storedVersions);
  }
}
