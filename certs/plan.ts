import type { KeyObject } from 'node:crypto';
import { type CertsConfig, CLOCK_SKEW_MS } from './config.ts';
import { type CertInfo, keyMatches, signedBy } from './pem.ts';
import { sameSans } from './sans.ts';

/** The time at which a certificate is due for renewal: when `fraction` of its lifetime remains. */
export function renewalTime(cert: CertInfo, fraction: number): Date {
  const lifetime = cert.notAfter.getTime() - cert.notBefore.getTime();
  return new Date(cert.notAfter.getTime() - lifetime * fraction);
}

/** Why the CA must be replaced now, or undefined to keep it. */
export function caRotationReason(
  ca: CertInfo | undefined,
  now: Date,
  config: Pick<CertsConfig, 'renewFraction' | 'forceCaRotation'>,
): string | undefined {
  if (!ca) return 'no CA yet';
  if (config.forceCaRotation) return 'rotation forced';
  if (now.getTime() >= ca.notAfter.getTime()) return `CA expired at ${ca.notAfter.toISOString()}`;
  if (now.getTime() >= renewalTime(ca, config.renewFraction).getTime()) {
    return `CA expires at ${ca.notAfter.toISOString()}: renewal threshold reached`;
  }
  return undefined;
}

export interface LeafState {
  cert: CertInfo;
  key: KeyObject;
}

/** What the serving cert must be: signed by the current CA, for exactly these SANs. */
export interface WantedLeaf {
  ca: CertInfo;
  sans: readonly string[];
}

/** Why the serving cert must be (re)issued now, or undefined to keep it. */
export function servingRenewalReason(
  leaf: LeafState | undefined,
  wanted: WantedLeaf,
  now: Date,
  config: Pick<CertsConfig, 'renewFraction' | 'forceServingRenewal'>,
): string | undefined {
  if (!leaf) return 'no serving certificate yet';
  const { cert } = leaf;
  const { ca, sans: wantedSans } = wanted;
  if (config.forceServingRenewal) return 'renewal forced';
  if (!keyMatches(cert, leaf.key)) return 'tls.key does not belong to tls.crt';
  if (!signedBy(cert, ca)) return 'signed by another CA than the current one';
  if (!sameSans(cert.sans, wantedSans)) return `SANs [${cert.sans.join(', ')}] differ from [${wantedSans.join(', ')}]`;
  if (!cert.serverAuth) return 'no serverAuth extended key usage';
  if (cert.isCa) return 'is a CA certificate';
  if (now.getTime() < cert.notBefore.getTime()) return `not valid before ${cert.notBefore.toISOString()}`;
  if (now.getTime() >= cert.notAfter.getTime()) return `expired at ${cert.notAfter.toISOString()}`;
  if (now.getTime() >= renewalTime(cert, config.renewFraction).getTime()) {
    return `expires at ${cert.notAfter.toISOString()}: renewal threshold reached`;
  }
  return undefined;
}

export interface BundleDecision {
  bundle: CertInfo[];
  /** CAs left out, with the reason. */
  dropped: Array<{ cert: CertInfo; reason: string }>;
  /** When the next retained old CA leaves the bundle (a reason to check again then). */
  nextDrop?: Date;
}

export interface BundleInputs {
  /** The certificates of the stored bundles other than the current CA. */
  candidates: readonly CertInfo[];
  /** The CA that signs serving certs from now on. */
  current: CertInfo;
  /** The serving cert stored before this run, if any. */
  liveLeaf: CertInfo | undefined;
  now: Date;
  overlapMs: number;
}

/**
 * The CA bundle clients should trust: the current CA, plus each older CA while a serving cert it
 * signed may still be live. Every serving cert an old CA signed was issued before the current CA
 * was made (its notBefore plus the skew allowance) and lives at most one serving lifetime, so an
 * old CA stays until `made + overlapMs` (or its own expiry, whichever is first), and always while
 * `liveLeaf` (the serving cert stored before this run) is signed by it and unexpired. Order: old first, current last; no
 * duplicates; non-CA certificates are dropped.
 */
export function nextBundle(inputs: BundleInputs): BundleDecision {
  const { candidates, current, liveLeaf, now, overlapMs } = inputs;
  const seen = new Set<string>([current.fingerprint]);
  const bundle: CertInfo[] = [];
  const dropped: BundleDecision['dropped'] = [];
  let nextDrop: Date | undefined;
  const overlapEnd = current.notBefore.getTime() + CLOCK_SKEW_MS + overlapMs;
  for (const cert of candidates) {
    if (seen.has(cert.fingerprint)) continue;
    seen.add(cert.fingerprint);
    if (!cert.isCa) {
      dropped.push({ cert, reason: 'not a CA certificate' });
      continue;
    }
    const signsLiveLeaf =
      liveLeaf !== undefined && now.getTime() < liveLeaf.notAfter.getTime() && signedBy(liveLeaf, cert);
    const until = Math.min(cert.notAfter.getTime(), overlapEnd);
    if (now.getTime() >= cert.notAfter.getTime() && !signsLiveLeaf) {
      dropped.push({ cert, reason: `expired at ${cert.notAfter.toISOString()}` });
    } else if (now.getTime() >= until && !signsLiveLeaf) {
      dropped.push({ cert, reason: `overlap ended at ${new Date(until).toISOString()}` });
    } else {
      bundle.push(cert);
      const end = signsLiveLeaf ? Math.max(until, (liveLeaf as CertInfo).notAfter.getTime()) : until;
      if (!nextDrop || end < nextDrop.getTime()) nextDrop = new Date(end);
    }
  }
  bundle.push(current);
  return { bundle, dropped, ...(nextDrop && { nextDrop }) };
}
