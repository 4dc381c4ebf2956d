import { CustomObjectsApi, type KubeConfig, type KubernetesObject, makeInformer } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { API_VERSION_V1, convertStaticSite, GROUP, PLURAL, type StaticSiteV1, VERSION_V1 } from '../../api/index.ts';
import { MemoryHostnameIndex } from '../admission/hostname-index.ts';
import type { HostnameSource } from '../server.ts';

interface SiteObject extends KubernetesObject {
  spec?: { hostname?: string };
}

function hostnameOf(site: SiteObject): string | undefined {
  try {
    return (convertStaticSite(site, API_VERSION_V1) as StaticSiteV1).spec.hostname;
  } catch {
    return undefined;
  }
}

function refOf(site: SiteObject) {
  return { namespace: site.metadata?.namespace ?? '', name: site.metadata?.name ?? '' };
}

export interface HostnameInformerOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Restart delay after a watch error: doubling from this up to 30 s. */
  retryBaseMs?: number;
}

/**
 * Keeps a hostname index of every StaticSite in the cluster from a list+watch (client-node's
 * informer), supervised: any error marks the cache unsynced and restarts it with backoff, so the
 * watch never dies silently.
 */
export function hostnameInformer(options: HostnameInformerOptions): HostnameSource {
  const index = new MemoryHostnameIndex();
  const api = options.kubeConfig.makeApiClient(CustomObjectsApi);
  const informer = makeInformer<SiteObject>(options.kubeConfig, `/apis/${GROUP}/${VERSION_V1}/${PLURAL}`, () =>
    api.listClusterCustomObject({ group: GROUP, version: VERSION_V1, plural: PLURAL }),
  );
  const set = (site: SiteObject) => index.set(refOf(site), hostnameOf(site));
  informer.on('add', set);
  informer.on('update', set);
  informer.on('delete', (site) => index.delete(refOf(site)));

  let stopped = false;
  let failures = 0;
  let retry: NodeJS.Timeout | undefined;
  const base = options.retryBaseMs ?? 500;
  const start = async () => {
    await informer.start();
    failures = 0;
    index.synced = true;
  };
  informer.on('error', (error) => {
    index.synced = false;
    if (stopped) return;
    const delay = Math.min(base * 2 ** failures++, 30_000);
    options.logger.warn({ err: String(error), retryInMs: delay }, 'StaticSite watch failed; restarting');
    retry = setTimeout(() => {
      start().catch((e) => options.logger.warn({ err: String(e) }, 'StaticSite relist failed'));
    }, delay);
  });

  return {
    index,
    start,
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      await informer.stop();
    },
  };
}
