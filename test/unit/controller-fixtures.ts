import type { ChildRegistry } from '../../controller/child-registry.ts';
import { ControllerManager } from '../../controller/manager.ts';
import { MemoryEventRecorder } from '../../controller/observability/events.ts';
import { silentLogger } from '../../controller/observability/logger.ts';
import type { ControllerMetrics } from '../../controller/observability/metrics.ts';
import type { RecordStore } from '../../controller/records/record-store.ts';
import { KubeApi } from '../../kube/api-client.ts';
import type { FakeApiServer, ManualClock } from '../support/kube/index.ts';

/** A ControllerManager on the fake API server, running, and how to stop it. */
export interface RunningManager {
  manager: ControllerManager;
  stop(): Promise<void>;
}

/**
 * Starts a manager (two workers, no leader election) watching `namespace` of the fake server, and
 * lets its caches sync and its first reconciles run.
 */
export async function startManager(
  server: FakeApiServer,
  setup: {
    namespace: string;
    clock: ManualClock;
    metrics: ControllerMetrics;
    records: RecordStore;
    resyncPeriodMs: number;
    children?: ChildRegistry;
  },
): Promise<RunningManager> {
  const { clock } = setup;
  const manager = new ControllerManager(
    {
      api: new KubeApi(server),
      clock,
      logger: silentLogger(),
      metrics: setup.metrics,
      records: setup.records,
      events: new MemoryEventRecorder(),
      children: setup.children,
    },
    {
      namespace: setup.namespace,
      claimsNamespace: 'staticsite-system',
      workers: 2,
      resyncPeriodMs: setup.resyncPeriodMs,
      watchDownThresholdMs: 30_000,
      shutdownGraceMs: 1000,
      baseDomain: 'example.com',
      image: 'nginx',
    },
  );
  const stopper = new AbortController();
  const run = manager.run(stopper.signal);
  await clock.advance(0);
  return {
    manager,
    stop: async () => {
      stopper.abort();
      await clock.advance(2000);
      await run;
    },
  };
}
