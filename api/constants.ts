export const GROUP = 'staticsite.dev';
export const KIND = 'StaticSite';
export const LIST_KIND = 'StaticSiteList';
export const PLURAL = 'staticsites';
export const SINGULAR = 'staticsite';
export const SHORT_NAMES = ['site'] as const;
export const CRD_NAME = `${PLURAL}.${GROUP}`;

export const VERSION_V1ALPHA1 = 'v1alpha1';
export const VERSION_V1 = 'v1';
export const STORAGE_VERSION = VERSION_V1;
export const API_VERSION_V1ALPHA1 = `${GROUP}/${VERSION_V1ALPHA1}`;
export const API_VERSION_V1 = `${GROUP}/${VERSION_V1}`;
export const SERVED_VERSIONS = [VERSION_V1ALPHA1, VERSION_V1] as const;
export type ServedVersion = (typeof SERVED_VERSIONS)[number];

export const FINALIZER = 'staticsite.dev/external-record';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'staticsite-controller';
export const CONTENT_HASH_ANNOTATION = 'staticsite.dev/content-sha256';
/** Carries v1 `spec.hostname` on a v1alpha1 object so a round trip loses nothing. Reserved. */
export const HOSTNAME_ANNOTATION = 'staticsite.dev/hostname';

export const TIERS = ['dev', 'prod'] as const;
export type Tier = (typeof TIERS)[number];

export const CONTENT_MAX_LENGTH = 65536;
export const REPLICAS_MIN = 1;
export const REPLICAS_MAX = 10;
export const DEFAULT_REPLICAS = 1;
export const DEFAULT_TIER: Tier = 'dev';
export const PROD_MIN_REPLICAS = 2;
export const HOSTNAME_MAX_LENGTH = 253;

/** DNS-1123 subdomain, the same expression as k8s.io/apimachinery's IsDNS1123Subdomain. The rules are in rules.ts. */
export const DNS1123_SUBDOMAIN_REGEX = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/** Names of the components, used by the CRD's conversion stanza and the manifests. */
export const DEFAULT_NAMESPACE = 'staticsite-system';
export const WEBHOOK_SERVICE_NAME = 'staticsite-webhook';
export const CONVERT_PATH = '/convert';
export const MUTATE_PATH = '/mutate';
export const VALIDATE_PATH = '/validate';

/** The base domain of `spec.hostname`'s default (hostname.ts), unless configured otherwise. */
export const DEFAULT_BASE_DOMAIN = 'sites.staticsite.dev';

/**
 * Sharded controllers (`staticsite controller --sharded`): the shard that reconciles a StaticSite,
 * set by the mutating webhook at admission and by the sharder when the shards change; the site's
 * children carry it too, so each shard watches only its own objects.
 */
export const SHARD_LABEL = 'shard.staticsite.dev/controller';
/** Set by the sharder on a site that must move to another live shard; that shard hands it over by removing both labels. */
export const DRAIN_LABEL = 'drain.staticsite.dev/controller';
/** On each shard's own Lease: the shard's name. The ring is made of the live Leases with this label. */
export const SHARD_LEASE_LABEL = 'staticsite.dev/shard';
/** A shard's Lease is `staticsite-shard-<shard name>`. */
export const SHARD_LEASE_PREFIX = 'staticsite-shard-';
