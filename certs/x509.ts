import { createPublicKey, generateKeyPair, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';
import { promisify } from 'node:util';
import forge from 'node-forge';

const generateKeyPairAsync = promisify(generateKeyPair);

/** A certificate and its private key, both PEM. */
export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export interface CertificateAuthorityOptions {
  commonName: string;
  notBefore: Date;
  validityDays: number;
  /** Overrides `notBefore + validityDays` (for a backdated notBefore with an exact end). */
  notAfter?: Date;
  keyBits?: number;
  /** A PEM RSA private key to certify instead of generating one (see generateRsaKeyPem). */
  keyPem?: string;
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
  /** Overrides `notBefore + validityDays` (for a backdated notBefore with an exact end). */
  notAfter?: Date;
  keyBits?: number;
  /** A PEM RSA private key to certify instead of generating one (see generateRsaKeyPem). */
  keyPem?: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_KEY_BITS = 2048;

/**
 * A new RSA private key as PKCS#1 PEM, generated natively and off the event loop (node-forge's
 * pure-JS generator takes seconds). Pass it as `keyPem` to the functions below.
 */
export async function generateRsaKeyPem(bits: number = DEFAULT_KEY_BITS): Promise<string> {
  const { privateKey } = await generateKeyPairAsync('rsa', { modulusLength: bits });
  return privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
}

/** RSA keys come from Node's native crypto: node-forge's pure-JS generator takes seconds. */
function rsaKeyPair(bits: number, existingKeyPem?: string): { publicKey: forge.pki.PublicKey; keyPem: string } {
  const keyPem =
    existingKeyPem ??
    generateKeyPairSync('rsa', { modulusLength: bits }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const publicKeyPem = createPublicKey(keyPem).export({ type: 'spki', format: 'pem' }).toString();
  return { publicKey: forge.pki.publicKeyFromPem(publicKeyPem), keyPem };
}

/**
 * Signs `cert` (SHA-256 with RSA, PKCS #1 v1.5) with Node's native crypto: node-forge's own RSA
 * signing is pure JavaScript, about 0.2 s of CPU per signature with a 3072-bit key. node-forge still
 * encodes the certificate; this does what its `cert.sign` does, with the signature made natively.
 */
function signCertificate(cert: forge.pki.Certificate, signerKeyPem: string): void {
  const oid = forge.pki.oids.sha256WithRSAEncryption as string;
  cert.siginfo.algorithmOid = oid;
  (cert as { signatureOid: string }).signatureOid = oid;
  // getTBSCertificate is public in node-forge, missing from its type declarations.
  const tbs = (
    forge.pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 }
  ).getTBSCertificate(cert);
  (cert as { tbsCertificate?: forge.asn1.Asn1 }).tbsCertificate = tbs;
  const der = Buffer.from(forge.asn1.toDer(tbs).getBytes(), 'binary');
  cert.signature = sign('sha256', der, signerKeyPem).toString('binary');
}

const PRINTABLE_STRING = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

/**
 * A subject attribute. node-forge encodes values as PrintableString, whose alphabet lacks `@`, `_`,
 * `*` and more; Go's x509 (so the API server) then rejects the whole certificate. Such values are
 * encoded as UTF8String instead.
 */
function attribute(name: string, value: string): forge.pki.CertificateField {
  return PRINTABLE_STRING.test(value)
    ? { name, value }
    : { name, value, valueTagClass: forge.asn1.Type.UTF8 as unknown as forge.asn1.Class };
}

function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f; // positive
  return bytes.toString('hex');
}

function newCertificate(
  publicKey: forge.pki.PublicKey,
  notBefore: Date,
  validityDays: number,
  notAfter?: Date,
): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = new Date(notBefore.getTime());
  cert.validity.notAfter = new Date(notAfter?.getTime() ?? notBefore.getTime() + validityDays * DAY_MS);
  return cert;
}

/** A self-signed CA that may sign leaf certificates only (path length 0). */
export function createCertificateAuthority(options: CertificateAuthorityOptions): KeyPair {
  const keys = rsaKeyPair(options.keyBits ?? DEFAULT_KEY_BITS, options.keyPem);
  const cert = newCertificate(keys.publicKey, options.notBefore, options.validityDays, options.notAfter);
  const subject = [attribute('commonName', options.commonName)];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  signCertificate(cert, keys.keyPem);
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}

/** A leaf certificate signed by `ca`, for a TLS server or a TLS client. */
export function issueCertificate(options: LeafOptions): KeyPair {
  const caCert = forge.pki.certificateFromPem(options.ca.certPem);
  const keys = rsaKeyPair(options.keyBits ?? DEFAULT_KEY_BITS, options.keyPem);
  const cert = newCertificate(keys.publicKey, options.notBefore, options.validityDays, options.notAfter);
  cert.setSubject([
    attribute('commonName', options.commonName),
    ...(options.organizations ?? []).map((value) => attribute('organizationName', value)),
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
  signCertificate(cert, options.ca.keyPem);
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}
