import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';

/** A certificate and its private key, both PEM. */
export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export interface CertificateAuthorityOptions {
  commonName: string;
  notBefore: Date;
  validityDays: number;
  keyBits?: number;
}

export interface LeafOptions {
  ca: KeyPair;
  commonName: string;
  organizations?: string[];
  /** DNS names and IP addresses; each lands in subjectAltName with the right type. */
  subjectAltNames?: string[];
  usage: 'serverAuth' | 'clientAuth';
  notBefore: Date;
  validityDays: number;
  keyBits?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_KEY_BITS = 2048;

/** RSA keys come from Node's native crypto: node-forge's pure-JS generator takes seconds. */
function rsaKeyPair(bits: number): {
  privateKey: forge.pki.rsa.PrivateKey;
  publicKey: forge.pki.rsa.PublicKey;
  keyPem: string;
} {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  const keyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const forgeKey = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  return { privateKey: forgeKey, publicKey: forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e), keyPem };
}

function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f; // positive
  return bytes.toString('hex');
}

function newCertificate(publicKey: forge.pki.PublicKey, notBefore: Date, validityDays: number): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = new Date(notBefore.getTime());
  cert.validity.notAfter = new Date(notBefore.getTime() + validityDays * DAY_MS);
  return cert;
}

/** A self-signed CA that may sign leaf certificates only (path length 0). */
export function createCertificateAuthority(options: CertificateAuthorityOptions): KeyPair {
  const keys = rsaKeyPair(options.keyBits ?? DEFAULT_KEY_BITS);
  const cert = newCertificate(keys.publicKey, options.notBefore, options.validityDays);
  const subject = [{ name: 'commonName', value: options.commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}

/** A leaf certificate signed by `ca`, for a TLS server or a TLS client. */
export function issueCertificate(options: LeafOptions): KeyPair {
  const caCert = forge.pki.certificateFromPem(options.ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(options.ca.keyPem);
  const keys = rsaKeyPair(options.keyBits ?? DEFAULT_KEY_BITS);
  const cert = newCertificate(keys.publicKey, options.notBefore, options.validityDays);
  cert.setSubject([
    { name: 'commonName', value: options.commonName },
    ...(options.organizations ?? []).map((value) => ({ name: 'organizationName', value })),
  ]);
  cert.setIssuer(caCert.subject.attributes);
  const altNames = (options.subjectAltNames ?? []).map((name) =>
    isIP(name) ? { type: 7, ip: name } : { type: 2, value: name },
  );
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: options.usage === 'serverAuth', clientAuth: options.usage === 'clientAuth' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
    ...(altNames.length > 0 ? [{ name: 'subjectAltName', altNames }] : []),
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}
