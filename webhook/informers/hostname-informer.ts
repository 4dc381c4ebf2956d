import type { Logger } from 'pino';
import { STATICSITES, specHostname } from '../../api/index.ts';
import { SystemClock } from '../../clock/clock.ts';
import { KubeApi } from '../../kube/api-client.ts';
import { loadClusterConfig } from '../../kube/cluster-config.ts';
import { Informer } from '../../kube/informer.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { HttpsTransport } from '../../kube/transport.ts';
import { type HostnameIndex, MemoryHostnameIndex } from '../admission/hostname-index.ts';
import type { HostnameSource } from '../server.ts';

function refOf(site: KubeObject) {
  return { namespace: site.metadata.namespace ?? '', name: site.metadata.name ?? '' };
}

export interface HostnameInformerOptions {
  /** A kubeconfig file; undefined: $KUBECONFIG, ~/.kube/config or the in-cluster config. */
  kubeconfig?: string;
  logger: Logger;
  /** `/readyz` fails while the watch has been down longer than this. */
  watchDownThresholdMs?: number;
}

/** The index is synced only while the informer has listed and its watch is not down for long. */
class InformerBackedIndex implements HostnameIndex {
  private readonly index = new MemoryHostnameIndex();
  private readonly informer: Informer<KubeObject>;
  private readonly downThresholdMs: number;

  constructor(informer: Informer<KubeObject>, downThresholdMs: number) {
    this.informer = informer;
    this.downThresholdMs = downThresholdMs;
    informer.onChange((type, site) => {
      if (type === 'delete') this.index.delete(refOf(site));
      else this.index.set(refOf(site), specHostname(site));
    });
  }

  get synced(): boolean {
    const health = this.informer.health();
    return health.synced && health.downForMs <= this.downThresholdMs;
  }

  holders(hostname: string) {
    return this.index.holders(hostname);
  }
}

/**
 * Every StaticSite's hostname, from the same supervised list+watch the controller uses (bookmarks,
 * relist on 410 Gone, reconnect with backoff, restart of a silent watch), never a LIST per request.
 */
export async function hostnameInformer(options: HostnameInformerOptions): Promise<HostnameSource> {
  const clock = new SystemClock();
  const transport = await HttpsTransport.connect(await loadClusterConfig(options.kubeconfig, { clock }), { clock });
  const informer = new Informer<KubeObject>({
    name: 'staticsites',
    api: new KubeApi(transport),
    type: STATICSITES,
    namespace: '',
    clock,
    logger: options.logger,
  });
  return {
    index: new InformerBackedIndex(informer, options.watchDownThresholdMs ?? 30_000),
    async start() {
      informer.start();
      await informer.waitForSync();
    },
    async stop() {
      await informer.stop();
      transport.close();
    },
  };
}
