import type { KeySpec } from './x509.ts';

/**
 * What the bootstrapper issues and when it renews: the defaults documented in docs/certs.md.
 */

export const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Keys: ECDSA P-256 for both certificates (a key in a millisecond against RSA's prime search of
 * 0.2-0.9 s, a cheaper handshake, 128-bit security like RSA 3072; cert-manager's and Go's default).
 * `--key-algorithm RSA` gives RSA keys of the sizes below.
 */
export type KeyAlgorithm = 'ECDSA' | 'RSA';
export const KEY_ALGORITHMS: readonly KeyAlgorithm[] = ['ECDSA', 'RSA'];
export const DEFAULT_KEY_ALGORITHM: KeyAlgorithm = 'ECDSA';
/** CA with RSA: 3072 bits (NIST SP 800-57: 2048-bit is acceptable only through 2030, and a CA made now lives to 2031). */
export const DEFAULT_CA_KEY_BITS = 3072;
/** Serving cert with RSA: 2048 bits, the widest-supported size, ample for a 90-day key. */
export const DEFAULT_SERVING_KEY_BITS = 2048;
/** CA lifetime: 5 years of 365 days. */
export const DEFAULT_CA_VALIDITY_DAYS = 5 * 365;
/** Serving cert lifetime: 90 days. */
export const DEFAULT_SERVING_VALIDITY_DAYS = 90;
/** Renew a certificate once this fraction of its lifetime (notAfter - notBefore) or less remains. */
export const DEFAULT_RENEW_FRACTION = 1 / 3;
/** notBefore is set this far in the past, so a peer whose clock runs a little behind accepts a new cert. */
export const CLOCK_SKEW_MS = 5 * 60 * 1000;
/**
 * How often `--watch` re-checks when nothing is due sooner. A pass with nothing to do is five GETs,
 * and this bounds how long a re-created webhook configuration or CRD goes without its caBundle.
 */
export const DEFAULT_CHECK_INTERVAL_MS = 10 * 60 * 1000;
/** A call to the API server that gets no answer for this long fails (and --watch retries the pass). */
export const API_REQUEST_TIMEOUT_MS = 30_000;

export interface CertsConfig {
  /** The webhook Service name and namespace: they make the default SANs. */
  service: string;
  namespace: string;
  /** Extra SANs: DNS names or IP addresses. */
  extraSans: string[];
  caValidityDays: number;
  servingValidityDays: number;
  keyAlgorithm: KeyAlgorithm;
  /** RSA key sizes, with keyAlgorithm RSA. */
  caKeyBits: number;
  servingKeyBits: number;
  renewFraction: number;
  /**
   * After a CA rotation, the old CA stays in the bundle this long after the new CA was made: every
   * serving cert the old CA signed was issued before that and lives at most one serving lifetime.
   * Default: the serving lifetime. Shorten it (`--ca-overlap`) after a suspected CA key leak.
   */
  caOverlapMs: number;
  /** Rotate the CA now even if it is not due (an operator's decision, e.g. a suspected key leak). */
  forceCaRotation: boolean;
  /** Renew the serving cert now even if it is not due. */
  forceServingRenewal: boolean;
}

export function defaultConfig(service: string, namespace: string, overrides: Partial<CertsConfig> = {}): CertsConfig {
  const servingValidityDays = overrides.servingValidityDays ?? DEFAULT_SERVING_VALIDITY_DAYS;
  return {
    service,
    namespace,
    extraSans: [],
    caValidityDays: DEFAULT_CA_VALIDITY_DAYS,
    keyAlgorithm: DEFAULT_KEY_ALGORITHM,
    caKeyBits: DEFAULT_CA_KEY_BITS,
    servingKeyBits: DEFAULT_SERVING_KEY_BITS,
    renewFraction: DEFAULT_RENEW_FRACTION,
    caOverlapMs: servingValidityDays * DAY_MS,
    forceCaRotation: false,
    forceServingRenewal: false,
    ...overrides,
    servingValidityDays,
  };
}

/** The key the CA or the serving certificate gets. */
export function keySpecFor(config: CertsConfig, cert: 'ca' | 'serving'): KeySpec {
  if (config.keyAlgorithm === 'ECDSA') return { algorithm: 'ECDSA' };
  return { algorithm: 'RSA', bits: cert === 'ca' ? config.caKeyBits : config.servingKeyBits };
}
