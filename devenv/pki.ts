import { generateKeyPairSync } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createCertificateAuthority, issueCertificate, type KeyPair } from '../certs/x509.ts';

/** What a control plane needs on disk: one CA for serving and client certs, and service-account keys. */
export interface ControlPlanePki {
  dir: string;
  ca: KeyPair;
  admin: { certPem: string; keyPem: string };
}

export const API_SERVER_SANS = [
  '127.0.0.1',
  'localhost',
  'kubernetes',
  'kubernetes.default',
  'kubernetes.default.svc',
  '10.0.0.1',
];

export function issueClientCertificate(ca: KeyPair, user: string, groups: string[] = []) {
  return issueCertificate({
    ca,
    commonName: user,
    organizations: groups,
    usage: 'clientAuth',
    notBefore: new Date(Date.now() - 60_000),
    validityDays: 30,
  });
}

/**
 * Writes ca.crt, apiserver.crt/key (SANs for loopback and the in-cluster names, plus `extraSans`)
 * and sa.key/sa.pub into `dir`, and returns the CA and an admin client cert in system:masters.
 */
export async function writeControlPlanePki(dir: string, extraSans: string[] = []): Promise<ControlPlanePki> {
  await mkdir(dir, { recursive: true });
  const now = new Date(Date.now() - 60_000);
  const ca = createCertificateAuthority({ commonName: 'staticsite-dev-ca', notBefore: now, validityDays: 30 });
  const serving = issueCertificate({
    ca,
    commonName: 'kube-apiserver',
    subjectAltNames: [...API_SERVER_SANS, ...extraSans],
    usage: 'serverAuth',
    notBefore: now,
    validityDays: 30,
  });
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const files: Record<string, string> = {
    'ca.crt': ca.certPem,
    'apiserver.crt': serving.certPem,
    'apiserver.key': serving.keyPem,
    'sa.key': sa.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    'sa.pub': sa.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content, { mode: 0o600 });
  return { dir, ca, admin: issueClientCertificate(ca, 'admin', ['system:masters']) };
}
