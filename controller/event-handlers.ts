import { type StaticSiteV1, siteHostname } from '../api/index.ts';
import type { ChangeType, Informer } from '../kube/informer.ts';
import { type Gateway, type KubeObject, type Lease, objectKey } from '../kube/objects.ts';
import { type ChildKind, childOwner } from './child-registry.ts';
import { claimHostname } from './claims/hostname-claims.ts';
import { OwnWrites } from './own-writes.ts';

/** Where event handlers put keys: the controller's work queue. */
export interface KeySink {
  add(key: string): void;
}

/** One child kind of the registry and its informer. */
export interface ChildInformer {
  kind: ChildKind;
  informer: Pick<Informer<KubeObject>, 'onChange'>;
}

export interface WatchedInformers {
  sites: Pick<Informer<StaticSiteV1>, 'onChange' | 'list'>;
  /** One informer per child kind of the registry. */
  children: readonly ChildInformer[];
  /** The hostname claims in the controller's namespace. */
  claims?: Pick<Informer<Lease>, 'onChange'>;
  /** With --gateway: the one Gateway the routes attach to, whose addresses the records point at. */
  gateway?: Pick<Informer<Gateway>, 'onChange'>;
}

export interface EventHandlersOptions {
  /** How a site without `spec.hostname` gets its hostname (to find the sites waiting for a claim). */
  baseDomain?: string;
  /** The record of this controller's own writes, shared with the reconciler; a new one when absent. */
  writes?: OwnWrites;
}

/**
 * What turns informer events into queue keys, as controller-runtime's EnqueueRequestForObject and
 * EnqueueRequestForOwner do: a StaticSite event enqueues the site's key, a child's event enqueues the
 * site its registry entry maps it to. Events that merely echo this controller's own writes (in
 * `writes`) are dropped.
 */
export class EventHandlers {
  readonly writes: OwnWrites;
  private readonly queue: KeySink;
  private readonly baseDomain: string;
  private sites: Pick<Informer<StaticSiteV1>, 'list'> | undefined;

  constructor(queue: KeySink, options: EventHandlersOptions = {}) {
    this.queue = queue;
    this.baseDomain = options.baseDomain ?? '';
    this.writes = options.writes ?? new OwnWrites();
  }

  /** Subscribes to the informers' changes. */
  register(informers: WatchedInformers): void {
    informers.sites.onChange((type, site) => this.onSiteChange(type, site));
    for (const { kind, informer } of informers.children) {
      informer.onChange((type, object) => this.onChildChange(kind, type, object));
    }
    this.sites = informers.sites;
    informers.claims?.onChange((type, claim) => this.onClaimChange(type, claim));
    informers.gateway?.onChange((type, gateway, old) => this.onGatewayChange(type, gateway, old));
  }

  onSiteChange(type: ChangeType, site: StaticSiteV1): void {
    if (!this.isChange('StaticSite', type, site)) return;
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

  /** The Gateway's addresses changed (or it came or went): every site's record points there, so every site is queued. */
  onGatewayChange(type: ChangeType, gateway: Gateway, old?: Gateway): void {
    const addresses = (g: Gateway | undefined) => JSON.stringify(g?.status?.addresses ?? []);
    if (type === 'update' && addresses(gateway) === addresses(old)) return;
    for (const site of this.sites?.list() ?? []) this.queue.add(objectKey(site));
  }

  onChildChange(kind: ChildKind, type: ChangeType, object: KubeObject): void {
    if (!this.isChange(kind.type.kind, type, object)) return;
    const key = childOwner(kind, object);
    if (key) this.queue.add(key);
  }

  /** False for the echo of our own write; a deletion is always a change (and ends the object's record). */
  private isChange(kind: string, type: ChangeType, object: KubeObject): boolean {
    if (type !== 'delete') return !this.writes.isEcho(kind, object);
    this.writes.forget(kind, objectKey(object));
    return true;
  }
}
