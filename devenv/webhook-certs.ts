import { mkdtemp, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCertificateAuthority, issueCertificate, type KeyPair } from '../certs/x509.ts';

/** A CA and a cert dir with a 127.0.0.1/localhost serving cert, for a webhook reached by URL. */
export interface LoopbackCerts {
  ca: KeyPair;
  dir: string;
  caBundle: string;
  /** Writes a fresh serving cert (same CA) into the dir the way a Secret volume swaps it: atomically. */
  rotate(): Promise<string>;
}

function serving(ca: KeyPair): KeyPair {
  return issueCertificate({
    ca,
    commonName: 'staticsite-webhook',
    subjectAltNames: ['127.0.0.1', 'localhost'],
    usage: 'serverAuth',
    notBefore: new Date(Date.now() - 60_000),
    validityDays: 1,
  });
}

async function writeAtomically(dir: string, name: string, content: string): Promise<void> {
  const tmp = join(dir, `.${name}.tmp`);
  await writeFile(tmp, content, { mode: 0o600 });
  await rename(tmp, join(dir, name));
}

export async function loopbackCerts(): Promise<LoopbackCerts> {
  const ca = createCertificateAuthority({
    commonName: 'staticsite-webhook-test-ca',
    notBefore: new Date(Date.now() - 60_000),
    validityDays: 2,
  });
  const dir = await mkdtemp(join(tmpdir(), 'staticsite-webhook-certs-'));
  const write = async () => {
    const pair = serving(ca);
    await writeAtomically(dir, 'tls.key', pair.keyPem);
    await writeAtomically(dir, 'tls.crt', pair.certPem);
    return pair.certPem;
  };
  await write();
  return { ca, dir, caBundle: Buffer.from(ca.certPem).toString('base64'), rotate: write };
}
