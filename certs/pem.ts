import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { CertsError } from './errors.ts';

/** Where a PEM came from, for messages: `Secret ns/name key tls.crt` or `file /dir/tls.crt`. */
export type Location = string;

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?\r?\n-----END CERTIFICATE-----/g;
const SERVER_AUTH_OID = '1.3.6.1.5.5.7.3.1';

/** A parsed certificate with the facts the bootstrapper decides on. */
export interface CertInfo {
  pem: string;
  x509: X509Certificate;
  notBefore: Date;
  notAfter: Date;
  /** DNS names and IP addresses from subjectAltName, in certificate order. */
  sans: string[];
  isCa: boolean;
  serverAuth: boolean;
  fingerprint: string;
}

export function inspectCertificate(x509: X509Certificate): CertInfo {
  return {
    pem: x509.toString(),
    x509,
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
    sans: parseSubjectAltName(x509.subjectAltName),
    isCa: x509.ca,
    serverAuth: (x509.keyUsage ?? []).includes(SERVER_AUTH_OID),
    fingerprint: x509.fingerprint256,
  };
}

/** Node prints SANs as `DNS:a, IP Address:127.0.0.1`; values with commas are JSON-quoted. */
export function parseSubjectAltName(text: string | undefined): string[] {
  if (!text) return [];
  const out: string[] = [];
  for (const part of text.split(/, (?=[A-Za-z ]+:)/)) {
    const colon = part.indexOf(':');
    const kind = part.slice(0, colon);
    let value = part.slice(colon + 1);
    if (value.startsWith('"')) value = JSON.parse(value) as string;
    if (kind === 'DNS' || kind === 'IP Address') out.push(value);
  }
  return out;
}

/** Every certificate in a PEM bundle; throws CorruptPem (naming `where`) if there is none or one is bad. */
export function parseCertificates(pem: string, where: Location, fix: string): CertInfo[] {
  const blocks = pem.match(CERT_BLOCK) ?? [];
  const leftover = pem.replace(CERT_BLOCK, '').trim();
  if (blocks.length === 0 || leftover !== '') {
    throw new CertsError(
      'CorruptPem',
      `${where} is not a PEM certificate bundle (${blocks.length === 0 ? 'no "-----BEGIN CERTIFICATE-----" block' : 'text outside the certificate blocks'}). ${fix}`,
    );
  }
  return blocks.map((block, i) => {
    try {
      return inspectCertificate(new X509Certificate(block));
    } catch (error) {
      throw new CertsError(
        'CorruptPem',
        `${where}: certificate ${i + 1} of ${blocks.length} does not parse (${(error as Error).message}). ${fix}`,
        { cause: error },
      );
    }
  });
}

/** A single certificate (the first of a bundle is not accepted silently: exactly one is required). */
export function parseCertificate(pem: string, where: Location, fix: string): CertInfo {
  const certs = parseCertificates(pem, where, fix);
  if (certs.length !== 1) {
    throw new CertsError('CorruptPem', `${where} holds ${certs.length} certificates where one is expected. ${fix}`);
  }
  return certs[0] as CertInfo;
}

export function parsePrivateKey(pem: string, where: Location, fix: string): KeyObject {
  if (!/-----BEGIN (RSA |EC )?PRIVATE KEY-----/.test(pem)) {
    throw new CertsError(
      'CorruptPem',
      `${where} is not a PEM private key (no "-----BEGIN ... PRIVATE KEY-----" block). ${fix}`,
    );
  }
  try {
    return createPrivateKey(pem);
  } catch (error) {
    throw new CertsError(
      'CorruptPem',
      `${where}: the private key does not parse (${(error as Error).message}). ${fix}`,
      {
        cause: error,
      },
    );
  }
}

/** True if `cert` carries the public half of `key`. */
export function keyMatches(cert: CertInfo, key: KeyObject): boolean {
  return cert.x509.checkPrivateKey(key);
}

/** True if `issuer` signed `cert` (names chain and the signature verifies). */
export function signedBy(cert: CertInfo, issuer: CertInfo): boolean {
  return cert.x509.checkIssued(issuer.x509) && cert.x509.verify(issuer.x509.publicKey);
}

export function bundlePem(certs: readonly CertInfo[]): string {
  return certs.map((c) => c.pem.trim()).join('\n') + (certs.length > 0 ? '\n' : '');
}
