import { type StaticSiteV1, siteHostname } from '../api/index.ts';
import type { ChangeType, Informer } from '../kube/informer.ts';
import {
  type ConfigMap,
  type Deployment,
  type KubeObject,
  type Lease,
  objectKey,
  type Service,
} from '../kube/objects.ts';
import { claimHostname } from './claims/hostname-claims.ts';
import { EchoFilter } from './echo-filter.ts';
import { INSTANCE_LABEL } from './reconcile/children.ts';
import { ownerKey } from './reconcile/ownership.ts';

/** Where event handlers put keys: the controller's work queue. */
export interface KeySink {
  add(key: string): void;
}

export interface WatchedInformers {
  sites: Informer<StaticSiteV1>;
  configMaps: Informer<ConfigMap>;
  deployments: Informer<Deployment>;
  services: Informer<Service>;
  /** The hostname claims in the controller's namespace. */
  claims?: Informer<Lease>;
}

/** The site a child belongs to: its controller owner reference, else its instance label. */
export function ownerSiteKey(object: KubeObject): string | undefined {
  const instance = object.metadata.labels?.[INSTANCE_LABEL];
  return (
    ownerKey(object) ?? (instance && object.metadata.namespace ? `${object.metadata.namespace}/${instance}` : undefined)
  );
}

/**
 * What turns informer events into queue keys, as controller-runtime's EnqueueRequestForObject and
 * EnqueueRequestForOwner do: a StaticSite event enqueues the site's key, a ConfigMap, Deployment
 * or Service event enqueues its owning site. Events that merely echo this controller's own writes
 * (told through `wrote`) are dropped by the EchoFilter.
 */
export class EventHandlers {
  private readonly echoes = new EchoFilter();
  private readonly queue: KeySink;
  private readonly baseDomain: string;
  private sites: Pick<Informer<StaticSiteV1>, 'list'> | undefined;

  /** `baseDomain`: how a site without `spec.hostname` gets its hostname (to find the sites waiting for a claim). */
  constructor(queue: KeySink, baseDomain = '') {
    this.queue = queue;
    this.baseDomain = baseDomain;
  }

  /** Subscribes to the informers' changes. */
  register(informers: WatchedInformers): void {
    informers.sites.onChange((type, site) => this.onSiteChange(type, site));
    informers.configMaps.onChange((type, object) => this.onChildChange('ConfigMap', type, object));
    informers.deployments.onChange((type, object) => this.onChildChange('Deployment', type, object));
    informers.services.onChange((type, object) => this.onChildChange('Service', type, object));
    this.sites = informers.sites;
    informers.claims?.onChange((type, claim) => this.onClaimChange(type, claim));
  }

  /** The reconciler wrote `object`: the watch event that echoes this write is not a change. */
  wrote(kind: string, object: KubeObject): void {
    this.echoes.wrote(kind, object);
  }

  onSiteChange(type: ChangeType, site: StaticSiteV1): void {
    if (type === 'delete') {
      this.echoes.forget('StaticSite', site);
    } else if (this.echoes.isEcho('StaticSite', site)) {
      return;
    }
    this.queue.add(objectKey(site));
  }

  /**
   * A hostname claim was deleted (its holder let go or is gone): every site that wants that
   * hostname is queued, so a site that lost it takes it now rather than at the next resync.
   */
  onClaimChange(type: ChangeType, claim: Lease): void {
    if (type !== 'delete') return;
    const hostname = claimHostname(claim);
    if (!hostname || !this.sites) return;
    for (const site of this.sites.list()) {
      if (siteHostname(site, this.baseDomain) === hostname) this.queue.add(objectKey(site));
    }
  }

  onChildChange(kind: string, type: ChangeType, object: KubeObject): void {
    if (type === 'delete') this.echoes.forget(kind, object);
    else if (this.echoes.isEcho(kind, object)) return;
    const key = ownerSiteKey(object);
    if (key) this.queue.add(key);
  }
}
