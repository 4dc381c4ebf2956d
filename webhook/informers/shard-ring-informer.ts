import type { Logger } from 'pino';
import { SHARD_LEASE_LABEL } from '../../api/index.ts';
import { SystemClock } from '../../clock/clock.ts';
import { KubeApi } from '../../kube/api-client.ts';
import { loadClusterConfig } from '../../kube/cluster-config.ts';
import { Informer } from '../../kube/informer.ts';
import type { Lease } from '../../kube/objects.ts';
import { LEASES } from '../../kube/resources.ts';
import { HttpsTransport } from '../../kube/transport.ts';
import { ShardMembership } from '../../sharding/shard-membership.ts';
import type { ShardSource } from '../server.ts';

export interface ShardRingOptions {
  /** A kubeconfig file; undefined: $KUBECONFIG, ~/.kube/config or the in-cluster config. */
  kubeconfig?: string;
  /** Where the sharded controllers' shard Leases live (the controller's namespace). */
  namespace: string;
  logger: Logger;
}

/**
 * The sharded controllers' ring, from their shard Leases (a label-selected list+watch in their
 * namespace): the shard each new or unlabelled StaticSite is labelled with at admission.
 */
export async function shardRingInformer(options: ShardRingOptions): Promise<ShardSource> {
  const clock = new SystemClock();
  const transport = await HttpsTransport.connect(await loadClusterConfig(options.kubeconfig, { clock }), { clock });
  const informer = new Informer<Lease>({
    name: 'shard-leases',
    api: new KubeApi(transport),
    type: LEASES,
    namespace: options.namespace,
    labelSelector: SHARD_LEASE_LABEL,
    clock,
    logger: options.logger,
  });
  const membership = new ShardMembership(clock, SHARD_LEASE_LABEL);
  informer.onChange((type, lease) => membership.observe(type, lease));
  return {
    assigner: { shardFor: (key) => membership.ring().shardFor(key) },
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
