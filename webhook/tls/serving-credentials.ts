import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';

/** The webhook's serving certificate and key as read from `--cert-dir`. */
export interface ServingCredentials {
  certPem: string;
  keyPem: string;
  notAfter: Date;
  fingerprint: string;
}

/** A cert dir that cannot be used: names the file and the problem. */
export class CredentialsError extends Error {
  override name = 'CredentialsError';
}

export interface CredentialsFileSystem {
  readFile(path: string, encoding: 'utf8'): Promise<string>;
}

export const CERT_FILE = 'tls.crt';
export const KEY_FILE = 'tls.key';

/** Reads one PEM file; a file that cannot be read is a CredentialsError naming it. */
export async function readPem(fs: CredentialsFileSystem, path: string): Promise<string> {
  try {
    return await fs.readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(error);
    throw new CredentialsError(`cannot read ${path}: ${why}`);
  }
}

/** Reads `tls.crt` and `tls.key` and checks that they form a usable pair. */
export async function readServingCredentials(fs: CredentialsFileSystem, dir: string): Promise<ServingCredentials> {
  const certPath = join(dir, CERT_FILE);
  const keyPath = join(dir, KEY_FILE);
  // One after the other, so the error names the certificate first, every time.
  const certPem = await readPem(fs, certPath);
  const keyPem = await readPem(fs, keyPath);
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    throw new CredentialsError(`${certPath} does not hold a PEM certificate`);
  }
  try {
    createSecureContext({ cert: certPem, key: keyPem });
  } catch (error) {
    const message = (error as Error).message;
    if (/key values mismatch/i.test(message)) {
      throw new CredentialsError(`${keyPath} is not the private key of ${certPath}`);
    }
    throw new CredentialsError(`${keyPath} does not hold a usable PEM private key (${message})`);
  }
  return { certPem, keyPem, notAfter: new Date(cert.validTo), fingerprint: cert.fingerprint256 };
}
