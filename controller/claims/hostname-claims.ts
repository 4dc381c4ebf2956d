import { createHash } from 'node:crypto';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, STATICSITES, type StaticSiteV1 } from '../../api/index.ts';
import type { CallOptions, KubeApi } from '../../kube/api-client.ts';
import { ApiError, isAlreadyExists, isNotFound } from '../../kube/api-error.ts';
import type { KubeStatus, Lease } from '../../kube/objects.ts';
import { apiVersionOf, collectionPath, LEASES, objectPath } from '../../kube/resources.ts';

/** Every claim carries this label (the claims informer's selector). */
export const CLAIM_LABEL = 'staticsite.dev/claim';
export const CLAIM_LABEL_VALUE = 'hostname';
/** The claims informer's label selector. */
export const CLAIM_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE},${CLAIM_LABEL}=${CLAIM_LABEL_VALUE}`;
/** The claimed hostname, in full (a label value holds at most 63 characters, a hostname 253). */
export const CLAIM_HOSTNAME_ANNOTATION = 'staticsite.dev/claimed-hostname';
/** `namespace/name` of the StaticSite holding the claim. */
export const CLAIM_SITE_ANNOTATION = 'staticsite.dev/site';
/** metadata.uid of the StaticSite holding the claim: a site deleted and re-created under its name is another site. */
export const CLAIM_SITE_UID_ANNOTATION = 'staticsite.dev/site-uid';

/** How often `claim` starts over after a claim vanished or was found stale, before it gives up. */
const CLAIM_ATTEMPTS = 5;

/**
 * The claim's name: deterministic from the hostname, so every controller replica and every site
 * POSTs the same object. A hostname can be 253 characters and a Lease name must be a DNS-1123
 * subdomain too, so the name carries a hash: `hostname-` + the first 40 hex digits of SHA-256 (160
 * bits; a collision is still detected, by the hostname annotation).
 */
export function claimName(hostname: string): string {
  return `hostname-${createHash('sha256').update(hostname, 'utf8').digest('hex').slice(0, 40)}`;
}

/** How a claim turned out. */
export type ClaimVerdict =
  /** This site holds the hostname: it created the claim now ('claimed') or before ('held'). */
  | { outcome: 'claimed' | 'held' }
  /** Another live site holds it: `holder` is its `namespace/name`. */
  | { outcome: 'lost'; holder: string };

export type ReleaseOutcome = 'released' | 'absent' | 'not-ours';

/** The claims informer's cache (namespace/name keys), or anything that answers the same. */
export interface ClaimCache {
  get(key: string): Lease | undefined;
  list(): Lease[];
}

export interface HostnameClaimsDeps {
  api: KubeApi;
  /** Where the claims live: the controller's own namespace (the leader-election Lease's). */
  namespace: string;
  /**
   * What this replica has seen of the claims. Used to skip the POST when the cache already shows
   * this site's claim, and to find the claims a site holds for hostnames it no longer uses. Every
   * verdict against another site, and every deletion, is decided on a fresh read.
   */
  cache?: ClaimCache;
}

export function claimHostname(claim: Lease): string | undefined {
  return claim.metadata.annotations?.[CLAIM_HOSTNAME_ANNOTATION];
}

export function claimSite(claim: Lease): string | undefined {
  return claim.metadata.annotations?.[CLAIM_SITE_ANNOTATION];
}

function claimSiteUid(claim: Lease): string | undefined {
  return claim.metadata.annotations?.[CLAIM_SITE_UID_ANNOTATION];
}

function siteKey(site: StaticSiteV1): string {
  return `${site.metadata.namespace}/${site.metadata.name}`;
}

/**
 * Hostname claims: at most one StaticSite may publish an external record for a hostname, whatever
 * the webhook admitted (it checks uniqueness against its cache, so concurrent creates all pass).
 * The claim is a `coordination.k8s.io/v1` Lease named after the hostname, created with a POST:
 * the API server stores at most one object per name, so exactly one POST answers 201 and every
 * other one 409 AlreadyExists. The loser reads the claim: its own (same site uid) is still ours; a
 * holder that no longer exists (404, or a site of that name with another uid) left a stale claim,
 * which is deleted with preconditions on the claim's uid and resourceVersion (so a claim re-made
 * meanwhile is never deleted) before trying again; a live holder wins.
 *
 * Why a Lease rather than a ConfigMap: a Lease is a small record of who holds what, which is its
 * purpose (kube-apiserver's identity leases are the same idea); its RBAC is separate from
 * ConfigMaps (the controller already creates ConfigMaps cluster-wide, and a `delete configmaps`
 * grant would reach every ConfigMap in the namespace, the webhook's included); no kubelet or
 * workload watches Leases. `spec.holderIdentity` names the holding site for `kubectl get leases`;
 * no duration is set, because a claim does not expire: it ends when the site lets it go or is gone.
 */
export class HostnameClaims {
  readonly namespace: string;
  private readonly deps: HostnameClaimsDeps;

  constructor(deps: HostnameClaimsDeps) {
    this.deps = deps;
    this.namespace = deps.namespace;
  }

  /** The claim object this site would create for `hostname`. */
  claimFor(hostname: string, site: StaticSiteV1): Lease {
    return {
      apiVersion: apiVersionOf(LEASES),
      kind: LEASES.kind,
      metadata: {
        name: claimName(hostname),
        namespace: this.namespace,
        labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [CLAIM_LABEL]: CLAIM_LABEL_VALUE },
        annotations: {
          [CLAIM_HOSTNAME_ANNOTATION]: hostname,
          [CLAIM_SITE_ANNOTATION]: siteKey(site),
          [CLAIM_SITE_UID_ANNOTATION]: site.metadata.uid ?? '',
        },
      },
      spec: { holderIdentity: siteKey(site) },
    };
  }

  /** Claims `hostname` for `site` (see the class comment). Throws on API failures. */
  async claim(hostname: string, site: StaticSiteV1, call: CallOptions = {}): Promise<ClaimVerdict> {
    const name = claimName(hostname);
    const cached = this.deps.cache?.get(`${this.namespace}/${name}`);
    if (cached && this.heldBy(cached, hostname, site)) return { outcome: 'held' };
    for (let attempt = 1; attempt <= CLAIM_ATTEMPTS; attempt++) {
      try {
        await this.deps.api.create(LEASES, this.namespace, this.claimFor(hostname, site), call);
        return { outcome: 'claimed' };
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
      }
      let claim: Lease;
      try {
        claim = await this.deps.api.get<Lease>(LEASES, this.namespace, name, call);
      } catch (error) {
        if (isNotFound(error)) continue; // released between our POST and GET: try again
        throw error;
      }
      if (this.heldBy(claim, hostname, site)) return { outcome: 'held' };
      const holder = claimSite(claim) ?? claim.spec?.holderIdentity ?? '';
      if (claimHostname(claim) !== hostname) {
        // Two hostnames with one 160-bit hash prefix: never taken over, reported as held.
        return { outcome: 'lost', holder: `${holder} (claim ${name} is for ${claimHostname(claim) ?? 'no hostname'})` };
      }
      if (await this.holderLives(claim, call)) return { outcome: 'lost', holder };
      await this.deleteClaim(claim, call);
    }
    throw new Error(`claiming hostname ${hostname}: the claim ${this.namespace}/${name} kept changing; will retry`);
  }

  /**
   * Deletes this site's claim on `hostname`, if it holds one: read fresh, then deleted with the
   * claim's uid as a precondition. Another site's claim is never touched ('not-ours').
   */
  async release(hostname: string, site: StaticSiteV1, call: CallOptions = {}): Promise<ReleaseOutcome> {
    let claim: Lease;
    try {
      claim = await this.deps.api.get<Lease>(LEASES, this.namespace, claimName(hostname), call);
    } catch (error) {
      if (isNotFound(error)) return 'absent';
      throw error;
    }
    if (!this.heldBy(claim, hostname, site)) return 'not-ours';
    return (await this.deleteClaim(claim, call)) ? 'released' : 'absent';
  }

  /** Hostnames the cache shows claimed by this site (by uid). */
  cachedHostnamesOf(site: StaticSiteV1): string[] {
    const uid = site.metadata.uid;
    if (!uid || !this.deps.cache) return [];
    return this.deps.cache
      .list()
      .filter((c) => claimSiteUid(c) === uid)
      .map((c) => claimHostname(c))
      .filter((h): h is string => h !== undefined);
  }

  /**
   * Claims the cache shows for a site key (any uid). Used once a GET has answered 404 for that
   * key: whoever made them no longer exists, so they are stale.
   */
  cachedClaimsOfKey(key: string): Lease[] {
    return this.deps.cache?.list().filter((c) => claimSite(c) === key) ?? [];
  }

  /** Deletes a claim, on the condition that it is still exactly the object read. False when it was already gone or changed. */
  async deleteClaim(claim: Lease, call: CallOptions = {}): Promise<boolean> {
    const { name = '', uid, resourceVersion } = claim.metadata;
    const path = objectPath(LEASES, this.namespace, name);
    const res = await this.deps.api.transport.request('DELETE', path, {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid, resourceVersion } },
      signal: call.signal,
      unthrottled: call.unthrottled,
    });
    if (res.status >= 200 && res.status <= 299) return true;
    const error = new ApiError('DELETE', path, {
      code: res.status,
      status: res.body as Partial<KubeStatus> | undefined,
      text: res.text,
    });
    // 404: already gone; 409: the preconditions failed, someone re-made or changed it meanwhile.
    if (res.status === 404 || res.status === 409) return false;
    throw error;
  }

  /** The collection the claims live in (for the informer and RBAC). */
  collectionPath(): string {
    return collectionPath(LEASES, this.namespace);
  }

  private heldBy(claim: Lease, hostname: string, site: StaticSiteV1): boolean {
    return (
      site.metadata.uid !== undefined && claimSiteUid(claim) === site.metadata.uid && claimHostname(claim) === hostname
    );
  }

  /**
   * Whether the site named in a claim still exists as the same object (same uid). A 404 or another
   * uid means stale. A 403 (a controller limited to one namespace cannot read the others) counts
   * as alive: a claim is never taken on a guess. Any other failure is thrown (the key is retried).
   */
  private async holderLives(claim: Lease, call: CallOptions): Promise<boolean> {
    const key = claimSite(claim) ?? '';
    const slash = key.indexOf('/');
    if (slash <= 0) return true; // names no site: not ours to judge, never taken over
    try {
      const holder = await this.deps.api.get<StaticSiteV1>(
        STATICSITES,
        key.slice(0, slash),
        key.slice(slash + 1),
        call,
      );
      return holder.metadata.uid === claimSiteUid(claim);
    } catch (error) {
      if (isNotFound(error)) return false;
      if (error instanceof ApiError && error.code === 403) return true;
      throw error;
    }
  }
}
