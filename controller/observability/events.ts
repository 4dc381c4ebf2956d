import { type Clock, formatTime } from '../../clock/clock.ts';
import type { KubeApi } from '../../kube/api-client.ts';
import { errorMessage, isNotFound } from '../../kube/api-error.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { EVENTS } from '../../kube/resources.ts';
import type { Logger } from './logger.ts';

export type EventType = 'Normal' | 'Warning';

/** Records what the controller did to an object, as Kubernetes Events. Never throws, never blocks a reconcile. */
export interface EventRecorder {
  event(object: KubeObject, type: EventType, reason: string, message: string): void;
}

interface Recent {
  name: string;
  namespace: string;
  count: number;
  /** The count the API server has. */
  written: number;
  seenAt: number;
  patchedAt: number;
}

export interface ApiEventRecorderOptions {
  api: KubeApi;
  clock: Clock;
  logger: Logger;
  component: string;
  /** This replica (the leader identity). */
  instance: string;
  /** An identical event within this window increments the existing Event's count (client-go's correlator). */
  aggregateWindowMs?: number;
  /** A repeated event's count is written at most this often; repeats in between are only counted. */
  patchIntervalMs?: number;
  /** Events posted at once; more are dropped with a log line rather than piling up. */
  maxInFlight?: number;
}

/**
 * core/v1 Events, posted in the background. A repeat of the same (object, type, reason, message)
 * patches the count and lastTimestamp of the Event already written, as client-go's EventCorrelator does.
 */
export class ApiEventRecorder implements EventRecorder {
  private readonly options: ApiEventRecorderOptions;
  private readonly recent = new Map<string, Recent>();
  private inFlight = 0;
  private prunedAt = 0;
  private readonly pending = new Set<Promise<void>>();

  constructor(options: ApiEventRecorderOptions) {
    this.options = options;
  }

  event(object: KubeObject, type: EventType, reason: string, message: string): void {
    const { logger, maxInFlight = 200 } = this.options;
    if (this.inFlight >= maxInFlight) {
      logger.warn({ reason, object: object.metadata.name }, 'event dropped: too many in flight');
      return;
    }
    this.inFlight++;
    const task = this.post(object, type, reason, message)
      .catch((error) => logger.warn({ reason, err: errorMessage(error) }, 'event not recorded'))
      .finally(() => {
        this.inFlight--;
        this.pending.delete(task);
      });
    this.pending.add(task);
  }

  private async patchCount(seen: Recent): Promise<void> {
    const now = this.options.clock.now();
    seen.patchedAt = now;
    if (seen.written === seen.count) return;
    const count = seen.count;
    await this.options.api.mergePatch(EVENTS, seen.namespace, seen.name, {
      patch: { count, lastTimestamp: formatTime(now) },
    });
    seen.written = count;
  }

  /** Waits for the events already handed over (for shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  private async post(object: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const { api, clock, component, instance } = this.options;
    const namespace = object.metadata.namespace ?? 'default';
    const now = clock.now();
    const key = [object.metadata.uid, type, reason, message].join('\u0000');
    this.prune(now);
    const seen = this.recent.get(key);
    if (seen) {
      seen.count++;
      seen.seenAt = now;
      // An error storm: repeats within the interval only count; the next one after it writes the total.
      if (now - seen.patchedAt < (this.options.patchIntervalMs ?? 10_000)) return;
      try {
        await this.patchCount(seen);
        return;
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
    const name = `${object.metadata.name}.${(BigInt(now) * 1_000_000n + BigInt(Math.floor(Math.random() * 1e6))).toString(16)}`;
    const timestamp = formatTime(now);
    await api.create(EVENTS, namespace, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: object.apiVersion,
        kind: object.kind,
        name: object.metadata.name,
        namespace: object.metadata.namespace,
        uid: object.metadata.uid,
        resourceVersion: object.metadata.resourceVersion,
      },
      reason,
      message,
      type,
      source: { component },
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      eventTime: null,
      count: 1,
      reportingComponent: component,
      reportingInstance: instance,
    });
    this.recent.set(key, { name, namespace, count: 1, written: 1, seenAt: now, patchedAt: now });
  }

  private prune(now: number): void {
    const window = this.options.aggregateWindowMs ?? 10 * 60 * 1000;
    if (now - this.prunedAt < 60_000 && this.recent.size < 8192) return;
    this.prunedAt = now;
    if (this.recent.size < 8192) {
      for (const [key, entry] of this.recent) if (now - entry.seenAt > window) this.recent.delete(key);
      return;
    }
    this.recent.clear();
  }
}

/** Collects events in memory: for unit tests and for running without Event permissions. */
export class MemoryEventRecorder implements EventRecorder {
  readonly events: Array<{ object: string; type: EventType; reason: string; message: string }> = [];

  event(object: KubeObject, type: EventType, reason: string, message: string): void {
    this.events.push({ object: `${object.metadata.namespace}/${object.metadata.name}`, type, reason, message });
  }
}
