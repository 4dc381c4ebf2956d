import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { CredentialsError, type CredentialsFileSystem, readPem } from './serving-credentials.ts';

/** `--client-ca FILE`: the CA certificates a caller's client certificate must chain to. */
export interface ClientCa {
  pem: string;
  /** SHA-256 fingerprints of the certificates in the file, in its order. */
  fingerprints: string[];
}

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * Reads the client CA file and checks it: one or more PEM certificates, each a CA (basicConstraints
 * CA:TRUE), that OpenSSL accepts as trust anchors. Anything else is a CredentialsError naming the file.
 */
export async function readClientCa(fs: CredentialsFileSystem, path: string): Promise<ClientCa> {
  const pem = await readPem(fs, path);
  const blocks = pem.match(CERTIFICATE_BLOCK) ?? [];
  if (blocks.length === 0) throw new CredentialsError(`${path} does not hold a PEM certificate`);
  const fingerprints = blocks.map((block, i) => {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(block);
    } catch {
      throw new CredentialsError(`${path}: certificate ${i + 1} does not parse`);
    }
    if (!cert.ca) throw new CredentialsError(`${path}: certificate ${i + 1} (${cert.subject}) is not a CA`);
    return cert.fingerprint256;
  });
  try {
    createSecureContext({ ca: pem });
  } catch (error) {
    throw new CredentialsError(`${path} is not a usable CA bundle (${(error as Error).message})`);
  }
  return { pem, fingerprints };
}
