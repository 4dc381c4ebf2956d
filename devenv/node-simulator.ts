import type { KubeHttp } from './kube-http.ts';

interface Pod {
  metadata: { name: string; namespace: string; uid?: string; deletionTimestamp?: string; resourceVersion?: string };
  spec: { nodeName?: string; containers: Array<{ name: string; image?: string }> };
  status?: { phase?: string; conditions?: Array<{ type: string; status: string }> };
}

export const SIMULATED_NODE = 'staticsite-sim-node';

/** Decides per pod whether the simulator keeps it unready. */
export type HoldPredicate = (pod: { namespace: string; name: string }) => boolean;

function isReady(pod: Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/**
 * What a kubelet (and the scheduler) would do, as kwok does it: binds pending pods to one fake
 * node, marks them Running and Ready, and finishes graceful deletions. `hold` keeps pods unready.
 */
export class NodeSimulator {
  private readonly client: KubeHttp;
  private readonly abort = new AbortController();
  private readonly inFlight = new Set<string>();
  private hold: HoldPredicate | undefined;
  private loop: Promise<void> | undefined;
  private resync: NodeJS.Timeout | undefined;
  private podIp = 1;
  private readonly resyncMs: number;

  /** `resyncMs`: how often every pod is listed again (a safety net behind the watch); default 2 s. */
  constructor(client: KubeHttp, options: { resyncMs?: number } = {}) {
    this.client = client;
    this.resyncMs = options.resyncMs ?? 2000;
  }

  async start(): Promise<void> {
    await this.ensureNode();
    const list = await this.client.must<{ metadata: { resourceVersion: string }; items: Pod[] }>('GET', '/api/v1/pods');
    for (const pod of list.items) this.handle(pod);
    this.loop = this.watchLoop(list.metadata.resourceVersion);
    this.resync = setInterval(() => void this.resyncAll(), this.resyncMs);
  }

  /** Keep matching pods unready (and flip ready ones back); `undefined` releases every hold. */
  setHold(predicate: HoldPredicate | undefined): void {
    this.hold = predicate;
    void this.resyncAll();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    if (this.resync) clearInterval(this.resync);
    await this.loop?.catch(() => {});
  }

  private async ensureNode(): Promise<void> {
    const node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: SIMULATED_NODE, labels: { 'kubernetes.io/hostname': SIMULATED_NODE, type: 'simulated' } },
    };
    const created = await this.client.post('/api/v1/nodes', node);
    if (created.status !== 201 && created.status !== 409) throw new Error(`create node: ${created.text}`);
    const live = await this.client.must<Record<string, unknown>>('GET', `/api/v1/nodes/${SIMULATED_NODE}`);
    const capacity = { cpu: '64', memory: '256Gi', pods: '5000' };
    const now = new Date().toISOString();
    await this.client.must('PUT', `/api/v1/nodes/${SIMULATED_NODE}/status`, {
      ...live,
      status: {
        capacity,
        allocatable: capacity,
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            message: 'simulated',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
        ],
        addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
      },
    });
  }

  private async watchLoop(resourceVersion: string): Promise<void> {
    let rv = resourceVersion;
    while (!this.abort.signal.aborted) {
      try {
        await this.client.watch(
          '/api/v1/pods',
          { resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 300 },
          (event) => {
            const meta = event.object.metadata as { resourceVersion?: string } | undefined;
            if (meta?.resourceVersion) rv = meta.resourceVersion;
            if (event.type === 'ADDED' || event.type === 'MODIFIED') this.handle(event.object as unknown as Pod);
            if (event.type === 'ERROR') rv = '';
          },
          this.abort.signal,
        );
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
      if (!rv) {
        const list = await this.client
          .get<{ metadata: { resourceVersion: string } }>('/api/v1/pods')
          .catch(() => undefined);
        rv = list?.body?.metadata?.resourceVersion ?? '';
      }
    }
  }

  private async resyncAll(): Promise<void> {
    if (this.abort.signal.aborted) return;
    const list = await this.client.get<{ items: Pod[] }>('/api/v1/pods').catch(() => undefined);
    for (const pod of list?.body?.items ?? []) this.handle(pod);
  }

  private handle(pod: Pod): void {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    if (this.inFlight.has(key) || this.abort.signal.aborted) return;
    const action = this.actionFor(pod);
    if (!action) return;
    this.inFlight.add(key);
    action()
      .catch(() => {}) // a conflict or a vanished pod: the next event or resync tries again
      .finally(() => this.inFlight.delete(key));
  }

  private actionFor(pod: Pod): (() => Promise<unknown>) | undefined {
    const { namespace, name } = pod.metadata;
    const base = `/api/v1/namespaces/${namespace}/pods/${name}`;
    if (pod.metadata.deletionTimestamp) {
      return () => this.client.delete(base, { query: { gracePeriodSeconds: 0 } });
    }
    if (!pod.spec.nodeName) {
      return () =>
        this.client.post(`${base}/binding`, {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name, namespace },
          target: { apiVersion: 'v1', kind: 'Node', name: SIMULATED_NODE },
        });
    }
    if (pod.spec.nodeName !== SIMULATED_NODE) return undefined;
    const held = this.hold?.({ namespace, name }) ?? false;
    if (isReady(pod) === !held && pod.status?.phase === 'Running') return undefined;
    return () => this.client.put(`${base}/status`, { ...pod, status: this.podStatus(pod, !held) });
  }

  private podStatus(pod: Pod, ready: boolean): Record<string, unknown> {
    const now = new Date().toISOString();
    const flag = ready ? 'True' : 'False';
    const n = this.podIp++;
    return {
      phase: 'Running',
      hostIP: '127.0.0.1',
      podIP: `10.244.${(n >> 8) & 255}.${n & 255}`,
      startTime: now,
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
        { type: 'Initialized', status: 'True', lastTransitionTime: now },
        { type: 'ContainersReady', status: flag, lastTransitionTime: now },
        { type: 'Ready', status: flag, lastTransitionTime: now },
      ],
      containerStatuses: pod.spec.containers.map((c) => ({
        name: c.name,
        image: c.image ?? '',
        imageID: '',
        containerID: `simulated://${pod.metadata.uid ?? pod.metadata.name}-${c.name}`,
        ready,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: now } },
      })),
    };
  }
}
