import type { Logger } from 'pino';
import { type Clock, sleep } from '../clock/clock.ts';
import type { KubeApi } from './api-client.ts';
import { ApiError, errorMessage, isGone } from './api-error.ts';
import { type KubeObject, type KubeStatus, objectKey, type WatchEvent } from './objects.ts';
import type { ResourceType } from './resources.ts';

export type ChangeType = 'add' | 'update' | 'delete';

/** Receives every change the informer sees; `old` is the cached object before an update. */
export type ChangeHandler<T extends KubeObject> = (type: ChangeType, object: T, old?: T) => void;

/** What the informer reports to metrics. */
export interface InformerObserver {
  relisted(resource: string, reason: 'initial' | 'expired' | 'error'): void;
  watchRestarted(resource: string, reason: 'closed' | 'error' | 'idle'): void;
}

export interface InformerOptions {
  /** The name in logs, metrics and /readyz (usually the resource's plural). */
  name: string;
  api: KubeApi;
  type: ResourceType;
  /** Empty: all namespaces. */
  namespace: string;
  labelSelector?: string;
  /** One object by name (`metadata.name=NAME`), as client-go's field-selected informers watch. */
  fieldSelector?: string;
  clock: Clock;
  logger: Logger;
  observer?: InformerObserver;
  pageSize?: number;
  /** Server-side watch timeout per connection, in seconds (client-go: random in [300, 600)). */
  watchTimeoutSeconds?: () => number;
  /** A watch that delivers neither an event nor a bookmark for this long is presumed dead and restarted. */
  idleTimeoutMs?: number;
  /** Reconnect backoff after errors: doubling from `backoffBaseMs` to `backoffMaxMs`. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
}

export interface InformerHealth {
  name: string;
  synced: boolean;
  watching: boolean;
  /** Milliseconds the watch has been down (0 while it is up). */
  downForMs: number;
  /** Milliseconds since the last list, event or bookmark. */
  lastEventAgeMs: number;
}

class WatchExpired extends Error {}

/**
 * List, then watch from the list's resourceVersion with bookmarks, forever: a 410 Gone relists and
 * reports every key (those that vanished in the gap as deletions); any other error reconnects with
 * backoff; a watch silent for longer than the idle timeout is restarted. The cache is a plain map
 * from namespace/name to the last object seen.
 */
export class Informer<T extends KubeObject> {
  readonly name: string;
  private readonly options: InformerOptions;
  private readonly store = new Map<string, T>();
  private readonly handlers: ChangeHandler<T>[] = [];
  private synced = false;
  private watching = false;
  private downSince: number;
  private lastEventAt: number;
  private syncWaiters: Array<() => void> = [];
  private loop: Promise<void> | undefined;
  private readonly abort = new AbortController();

  constructor(options: InformerOptions) {
    this.options = options;
    this.name = options.name;
    this.downSince = options.clock.now();
    this.lastEventAt = options.clock.now();
  }

  onChange(handler: ChangeHandler<T>): void {
    this.handlers.push(handler);
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  list(): T[] {
    return [...this.store.values()];
  }

  keys(): string[] {
    return [...this.store.keys()];
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list has filled the cache (or the informer stops). */
  waitForSync(): Promise<void> {
    if (this.synced || this.abort.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  health(): InformerHealth {
    const now = this.options.clock.now();
    return {
      name: this.name,
      synced: this.synced,
      watching: this.watching,
      downForMs: this.watching ? 0 : now - this.downSince,
      lastEventAgeMs: now - this.lastEventAt,
    };
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    for (const resolve of this.syncWaiters.splice(0)) resolve();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { clock, logger } = this.options;
    const signal = this.abort.signal;
    let resourceVersion: string | undefined;
    let failures = 0;
    let relistReason: 'initial' | 'expired' | 'error' = 'initial';
    while (!signal.aborted) {
      try {
        if (resourceVersion === undefined) {
          resourceVersion = await this.relist(signal);
          this.options.observer?.relisted(this.name, relistReason);
        }
        const outcome = await this.watch(resourceVersion, signal);
        resourceVersion = outcome.resourceVersion;
        if (outcome.events > 0 || outcome.lastedMs > 1000) failures = 0;
        else failures++;
        this.options.observer?.watchRestarted(this.name, outcome.idle ? 'idle' : 'closed');
        if (outcome.idle) logger.warn({ informer: this.name }, 'watch idle for too long, restarting it');
        if (failures > 0) await sleep(clock, this.backoff(failures), signal);
      } catch (error) {
        this.setWatching(false);
        if (signal.aborted) break;
        if (error instanceof WatchExpired || isGone(error)) {
          logger.info({ informer: this.name, resourceVersion }, 'watch expired (410 Gone): relisting');
          resourceVersion = undefined;
          relistReason = 'expired';
          continue;
        }
        failures++;
        relistReason = 'error';
        const delay = this.backoff(failures);
        logger.warn({ informer: this.name, err: errorMessage(error), retryInMs: delay }, 'list/watch failed');
        this.options.observer?.watchRestarted(this.name, 'error');
        await sleep(clock, delay, signal);
      }
    }
    this.setWatching(false);
  }

  private backoff(failures: number): number {
    const base = this.options.backoffBaseMs ?? 200;
    const max = this.options.backoffMaxMs ?? 30_000;
    return Math.min(max, base * 2 ** Math.min(failures - 1, 30));
  }

  /** A full, paginated list; replaces the cache and reports every key. Returns the list's resourceVersion. */
  private async relist(signal: AbortSignal): Promise<string> {
    const { api, type, namespace, labelSelector, fieldSelector } = this.options;
    const items: T[] = [];
    let cont: string | undefined;
    let resourceVersion = '';
    do {
      const page = await api.list<T>(
        type,
        namespace,
        { labelSelector, fieldSelector, limit: this.options.pageSize ?? 500, continue: cont },
        { signal },
      );
      for (const item of page.items) items.push(item);
      cont = page.metadata.continue || undefined;
      resourceVersion = page.metadata.resourceVersion ?? '';
    } while (cont);
    const previous = new Map(this.store);
    this.store.clear();
    for (const item of items) this.store.set(objectKey(item), forCache(item, type));
    this.lastEventAt = this.options.clock.now();
    for (const [key, object] of this.store) {
      const old = previous.get(key);
      this.emit(old ? 'update' : 'add', object, old);
    }
    for (const [key, old] of previous) if (!this.store.has(key)) this.emit('delete', old);
    if (!this.synced) {
      this.synced = true;
      for (const resolve of this.syncWaiters.splice(0)) resolve();
    }
    return resourceVersion;
  }

  private async watch(
    resourceVersion: string,
    signal: AbortSignal,
  ): Promise<{ resourceVersion: string; events: number; lastedMs: number; idle: boolean }> {
    const { api, type, namespace, labelSelector, fieldSelector, clock } = this.options;
    const started = clock.now();
    const connection = new AbortController();
    const stopConnection = () => connection.abort();
    signal.addEventListener('abort', stopConnection, { once: true });
    const idleMs = this.options.idleTimeoutMs ?? 150_000;
    let idle = false;
    let idleTimer = clock.setTimeout(() => {}, 0);
    const armIdle = () => {
      clock.clearTimeout(idleTimer);
      idleTimer = clock.setTimeout(() => {
        idle = true;
        connection.abort();
      }, idleMs);
    };
    let rv = resourceVersion;
    let events = 0;
    try {
      armIdle();
      const timeoutSeconds = this.options.watchTimeoutSeconds?.() ?? Math.floor(300 + Math.random() * 300);
      const stream = await api.watch(
        type,
        namespace,
        { labelSelector, fieldSelector, resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds },
        connection.signal,
      );
      if (stream.status !== 200 || !stream.lines) {
        const status = stream.body as Partial<KubeStatus> | undefined;
        throw new ApiError('WATCH', type.plural, { code: stream.status, status, text: stream.text });
      }
      this.setWatching(true);
      try {
        for await (const line of stream.lines) {
          if (!line.trim()) continue;
          armIdle();
          const event = JSON.parse(line) as WatchEvent;
          rv = this.apply(event, rv);
          events++;
        }
      } catch (error) {
        if (!connection.signal.aborted) throw error;
      }
      return { resourceVersion: rv, events, lastedMs: clock.now() - started, idle };
    } finally {
      clock.clearTimeout(idleTimer);
      signal.removeEventListener('abort', stopConnection);
      connection.abort();
      this.setWatching(false);
    }
  }

  /** Applies one watch event to the cache; returns the resourceVersion to resume from. */
  private apply(event: WatchEvent, rv: string): string {
    this.lastEventAt = this.options.clock.now();
    if (event.type === 'ERROR') {
      const status = event.object as KubeStatus;
      if (status.code === 410) throw new WatchExpired(status.message ?? 'Gone');
      throw new ApiError('WATCH', this.options.type.plural, { code: status.code ?? 500, status });
    }
    const object = forCache(event.object as T, this.options.type);
    const next = object.metadata.resourceVersion ?? rv;
    if (event.type === 'BOOKMARK') return next;
    const key = objectKey(object);
    const old = this.store.get(key);
    if (event.type === 'DELETED') {
      this.store.delete(key);
      this.emit('delete', old ?? object);
    } else {
      this.store.set(key, object);
      this.emit(old ? 'update' : 'add', object, old);
    }
    return next;
  }

  private emit(type: ChangeType, object: T, old?: T): void {
    for (const handler of this.handlers) {
      try {
        handler(type, object, old);
      } catch (error) {
        this.options.logger.error({ informer: this.name, err: errorMessage(error) }, 'event handler failed');
      }
    }
  }

  private setWatching(up: boolean): void {
    if (this.watching === up) return;
    this.watching = up;
    if (!up) this.downSince = this.options.clock.now();
  }
}

/** List items carry no apiVersion/kind; put them back so cached objects can be written as they are. */
/**
 * An object as the cache keeps it: with its kind (lists omit it from items), without
 * metadata.managedFields, as controller-runtime's cache.TransformStripManagedFields does: nothing
 * reads them from a cache, they are often the larger part of an object, and a PUT that omits them
 * leaves the server's untouched.
 */
function forCache<T extends KubeObject>(object: T, type: ResourceType): T {
  const { managedFields: _, ...metadata } = object.metadata as T['metadata'] & { managedFields?: unknown };
  return {
    ...object,
    apiVersion: object.apiVersion || (type.group ? `${type.group}/${type.version}` : type.version),
    kind: object.kind || type.kind,
    metadata,
  };
}
