/**
 * X.509 certificates for the webhook's TLS: a CA and the leaves it signs, with ECDSA P-256 or RSA
 * keys. Keys come from Node's native crypto and so do signatures; node-forge only encodes ASN.1
 * (its certificate API knows RSA keys alone). The certificates are what Go's crypto/x509, and so the
 * API server, verifies: RFC 5280 profile, SKI/AKI by method 1, DER throughout.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  generateKeyPairSync,
  randomBytes,
  sign,
} from 'node:crypto';
import { isIP } from 'node:net';
import { promisify } from 'node:util';
import forge from 'node-forge';

const generateKeyPairAsync = promisify(generateKeyPair);
const { asn1 } = forge;
type Asn1 = forge.asn1.Asn1;

/** A certificate and its private key, both PEM. */
export interface KeyPair {
  certPem: string;
  keyPem: string;
}

/**
 * What kind of key a certificate certifies. ECDSA P-256 by default: a key in a millisecond, a
 * cheaper handshake, the default of cert-manager and Go's own tooling; RSA where a client needs it.
 */
export type KeySpec = { algorithm: 'ECDSA' } | { algorithm: 'RSA'; bits: number };
export const ECDSA_P256: KeySpec = { algorithm: 'ECDSA' };

export interface CertificateAuthorityOptions {
  commonName: string;
  notBefore: Date;
  validityDays: number;
  /** Overrides `notBefore + validityDays` (for a backdated notBefore with an exact end). */
  notAfter?: Date;
  /** The key to make when `keyPem` is absent (default ECDSA P-256). */
  key?: KeySpec;
  /** A PEM private key (RSA or EC) to certify instead of generating one (see generateKeyPem). */
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
  /** The key to make when `keyPem` is absent (default ECDSA P-256). */
  key?: KeySpec;
  /** A PEM private key (RSA or EC) to certify instead of generating one (see generateKeyPem). */
  keyPem?: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_KEY_BITS = 2048;

function exportKey(privateKey: import('node:crypto').KeyObject, spec: KeySpec): string {
  // As cert-manager encodes them by default: PKCS#1 for RSA, SEC 1 for EC.
  return privateKey.export({ type: spec.algorithm === 'RSA' ? 'pkcs1' : 'sec1', format: 'pem' }).toString();
}

/** A new private key as PEM, generated natively and off the event loop. */
export async function generateKeyPem(spec: KeySpec = ECDSA_P256): Promise<string> {
  const { privateKey } =
    spec.algorithm === 'RSA'
      ? await generateKeyPairAsync('rsa', { modulusLength: spec.bits })
      : await generateKeyPairAsync('ec', { namedCurve: 'prime256v1' });
  return exportKey(privateKey, spec);
}

/** A new RSA private key as PKCS#1 PEM (generateKeyPem with RSA). */
export function generateRsaKeyPem(bits: number = DEFAULT_KEY_BITS): Promise<string> {
  return generateKeyPem({ algorithm: 'RSA', bits });
}

function keyPemFor(spec: KeySpec | undefined, existing: string | undefined): string {
  if (existing !== undefined) return existing;
  const key = spec ?? ECDSA_P256;
  const { privateKey } =
    key.algorithm === 'RSA'
      ? generateKeyPairSync('rsa', { modulusLength: key.bits })
      : generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return exportKey(privateKey, key);
}

// ASN.1 building blocks (DER).
const U = asn1.Class.UNIVERSAL;
const T = asn1.Type;
const bytesOf = (buffer: Buffer) => buffer.toString('binary');
const derOf = (node: Asn1) => Buffer.from(asn1.toDer(node).getBytes(), 'binary');
const sequence = (...items: Asn1[]) => asn1.create(U, T.SEQUENCE, true, items);
const set = (...items: Asn1[]) => asn1.create(U, T.SET, true, items);
const oid = (dotted: string) => asn1.create(U, T.OID, false, asn1.oidToDer(dotted).getBytes());
const octets = (value: Buffer) => asn1.create(U, T.OCTETSTRING, false, bytesOf(value));
const bits = (value: Buffer, unused = 0) =>
  asn1.create(U, T.BITSTRING, false, String.fromCharCode(unused) + bytesOf(value));
const integer = (value: Buffer) => asn1.create(U, T.INTEGER, false, bytesOf(value));
const explicit = (tag: number, item: Asn1) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, tag, true, [item]);

const OID = {
  rsaWithSha256: '1.2.840.113549.1.1.11',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organizationName: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

const PRINTABLE_STRING = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

/**
 * A Name of one attribute per RDN. PrintableString lacks `@`, `_`, `*` and more, and Go's x509 (so
 * the API server) rejects a certificate that puts them there: such values are UTF8String.
 */
function name(attributes: Array<[string, string]>): Asn1 {
  return sequence(
    ...attributes.map(([type, value]) =>
      set(
        sequence(
          oid(type),
          asn1.create(
            U,
            PRINTABLE_STRING.test(value) ? T.PRINTABLESTRING : T.UTF8,
            false,
            forge.util.encodeUtf8(value),
          ),
        ),
      ),
    ),
  );
}

/** RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime after. */
function time(date: Date): Asn1 {
  return date.getUTCFullYear() < 2050
    ? asn1.create(U, T.UTCTIME, false, asn1.dateToUtcTime(date))
    : asn1.create(U, T.GENERALIZEDTIME, false, asn1.dateToGeneralizedTime(date));
}

/** A positive 16-byte serial, its first byte neither 0 nor with the sign bit (minimal DER). */
function serialNumber(): Buffer {
  const serial = randomBytes(16);
  serial[0] = 0x40 | ((serial[0] ?? 0) & 0x3f);
  return serial;
}

function extension(id: string, critical: boolean, value: Asn1): Asn1 {
  return sequence(oid(id), ...(critical ? [asn1.create(U, T.BOOLEAN, false, '\xff')] : []), octets(derOf(value)));
}

/** KeyUsage bits (RFC 5280 4.2.1.3) as a DER BIT STRING: trailing zero bits dropped. */
function keyUsage(flags: {
  digitalSignature?: boolean;
  keyEncipherment?: boolean;
  keyCertSign?: boolean;
  cRLSign?: boolean;
}) {
  const positions = [
    flags.digitalSignature && 0,
    flags.keyEncipherment && 2,
    flags.keyCertSign && 5,
    flags.cRLSign && 6,
  ].filter((b): b is number => typeof b === 'number');
  let byte = 0;
  for (const b of positions) byte |= 0x80 >> b;
  const last = Math.max(...positions);
  return bits(Buffer.from([byte]), 7 - last);
}

/** The subjectPublicKeyInfo of a private key's public half, and its key identifier (RFC 5280 4.2.1.2, method 1). */
function publicKeyOf(keyPem: string): { spki: Asn1; keyId: Buffer } {
  const spkiDer = createPublicKey(keyPem).export({ type: 'spki', format: 'der' });
  const spki = asn1.fromDer(bytesOf(spkiDer));
  const publicKeyBits = Buffer.from((spki.value as Asn1[])[1]?.value as string, 'binary').subarray(1);
  return { spki, keyId: createHash('sha1').update(publicKeyBits).digest() };
}

/** The signature algorithm of the signer's key: SHA-256 with RSA (PKCS #1 v1.5) or ECDSA. */
function signatureAlgorithm(signerKeyPem: string): Asn1 {
  const type = createPrivateKey(signerKeyPem).asymmetricKeyType;
  if (type === 'rsa') return sequence(oid(OID.rsaWithSha256), asn1.create(U, T.NULL, false, ''));
  if (type === 'ec') return sequence(oid(OID.ecdsaWithSha256));
  throw new Error(`a signing key of type ${String(type)} is not supported (RSA or EC)`);
}

interface TbsFields {
  issuer: Asn1;
  subject: Asn1;
  notBefore: Date;
  notAfter: Date;
  spki: Asn1;
  extensions: Asn1[];
}

/** TBSCertificate, signed natively, wrapped as a Certificate, as PEM. */
function signedCertificatePem(fields: TbsFields, signerKeyPem: string): string {
  const algorithm = signatureAlgorithm(signerKeyPem);
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))),
    integer(serialNumber()),
    algorithm,
    fields.issuer,
    sequence(time(fields.notBefore), time(fields.notAfter)),
    fields.subject,
    fields.spki,
    explicit(3, sequence(...fields.extensions)),
  );
  const signature = sign('sha256', derOf(tbs), signerKeyPem);
  const certificate = derOf(sequence(tbs, signatureAlgorithm(signerKeyPem), bits(signature)));
  const base64 = certificate.toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${base64}${base64.endsWith('\n') ? '' : '\n'}-----END CERTIFICATE-----\n`;
}

/** The subject Name (as encoded) and the key identifier of a CA certificate, to issue under it. */
function issuerOf(caCertPem: string): { subject: Asn1; keyId: Buffer } {
  const der = Buffer.from(caCertPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const tbs = (asn1.fromDer(bytesOf(der)).value as Asn1[])[0] as Asn1;
  const fields = tbs.value as Asn1[];
  const offset = fields[0]?.tagClass === asn1.Class.CONTEXT_SPECIFIC ? 1 : 0; // version present
  const subject = fields[offset + 4] as Asn1;
  const spki = fields[offset + 5] as Asn1;
  // Its own SKI when it has one (any method); else method 1 over its key.
  const extensions = fields.find((f) => f.tagClass === asn1.Class.CONTEXT_SPECIFIC && f.type === 3);
  for (const ext of ((extensions?.value as Asn1[] | undefined)?.[0]?.value ?? []) as Asn1[]) {
    const parts = ext.value as Asn1[];
    if (asn1.derToOid(forge.util.createBuffer(parts[0]?.value as string)) !== OID.subjectKeyIdentifier) continue;
    const inner = asn1.fromDer(parts.at(-1)?.value as string);
    return { subject, keyId: Buffer.from(inner.value as string, 'binary') };
  }
  const publicKeyBits = Buffer.from((spki.value as Asn1[])[1]?.value as string, 'binary').subarray(1);
  return { subject, keyId: createHash('sha1').update(publicKeyBits).digest() };
}

function validity(options: { notBefore: Date; validityDays: number; notAfter?: Date }) {
  return {
    notBefore: new Date(options.notBefore.getTime()),
    notAfter: new Date(options.notAfter?.getTime() ?? options.notBefore.getTime() + options.validityDays * DAY_MS),
  };
}

/** A self-signed CA that may sign leaf certificates only (path length 0). */
export function createCertificateAuthority(options: CertificateAuthorityOptions): KeyPair {
  const keyPem = keyPemFor(options.key, options.keyPem);
  const { spki, keyId } = publicKeyOf(keyPem);
  const subject = name([[OID.commonName, options.commonName]]);
  const certPem = signedCertificatePem(
    {
      issuer: subject,
      subject,
      ...validity(options),
      spki,
      extensions: [
        extension(
          OID.basicConstraints,
          true,
          sequence(asn1.create(U, T.BOOLEAN, false, '\xff'), integer(Buffer.from([0]))),
        ),
        extension(OID.keyUsage, true, keyUsage({ keyCertSign: true, cRLSign: true, digitalSignature: true })),
        extension(OID.subjectKeyIdentifier, false, octets(keyId)),
      ],
    },
    keyPem,
  );
  return { certPem, keyPem };
}

/** A leaf certificate signed by `ca`, for a TLS server or a TLS client. */
export function issueCertificate(options: LeafOptions): KeyPair {
  const keyPem = keyPemFor(options.key, options.keyPem);
  const { spki } = publicKeyOf(keyPem);
  const issuer = issuerOf(options.ca.certPem);
  const rsa = createPrivateKey(keyPem).asymmetricKeyType === 'rsa';
  const altNames = (options.subjectAltNames ?? []).map((san) => {
    const version = isIP(san);
    if (version === 0) return asn1.create(asn1.Class.CONTEXT_SPECIFIC, 2, false, san);
    const address =
      version === 4
        ? Buffer.from(san.split('.').map(Number))
        : Buffer.from(forge.util.hexToBytes(expandIpv6(san)), 'binary');
    return asn1.create(asn1.Class.CONTEXT_SPECIFIC, 7, false, bytesOf(address));
  });
  const certPem = signedCertificatePem(
    {
      issuer: issuer.subject,
      subject: name([
        [OID.commonName, options.commonName],
        ...(options.organizations ?? []).map((o): [string, string] => [OID.organizationName, o]),
      ]),
      ...validity(options),
      spki,
      extensions: [
        extension(OID.basicConstraints, true, sequence()),
        // keyEncipherment only for RSA: an ECDSA key cannot encipher (RFC 8813), Go sets it likewise.
        extension(OID.keyUsage, true, keyUsage({ digitalSignature: true, keyEncipherment: rsa })),
        extension(
          OID.extKeyUsage,
          false,
          sequence(oid(options.usage === 'serverAuth' ? OID.serverAuth : OID.clientAuth)),
        ),
        extension(
          OID.authorityKeyIdentifier,
          false,
          sequence(asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, false, bytesOf(issuer.keyId))),
        ),
        ...(altNames.length > 0 ? [extension(OID.subjectAltName, false, sequence(...altNames))] : []),
      ],
    },
    options.ca.keyPem,
  );
  return { certPem, keyPem };
}

/** An IPv6 address as 32 hex digits. */
function expandIpv6(written: string): string {
  // A trailing dotted quad (::ffff:192.0.2.1) is the last two groups.
  const address = written.replace(/\d+\.\d+\.\d+\.\d+$/, (quad) =>
    quad
      .split('.')
      .map((n) => Number(n).toString(16).padStart(2, '0'))
      .join('')
      .replace(/^(.{4})/, '$1:'),
  );
  const [head = '', tail] = address.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const fill = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => g.padStart(4, '0')).join('');
}
