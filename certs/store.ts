/** The CA material: `ca.crt` is the bundle clients trust (old CAs first), `ca.key` the current CA's key. */
export interface StoredCa {
  bundlePem?: string;
  keyPem?: string;
}

/** The serving material the webhook loads: its cert and key, and the same bundle as `ca.crt`. */
export interface StoredServing {
  certPem?: string;
  keyPem?: string;
  caPem?: string;
}

export type MaterialKind = 'ca' | 'serving';

/** Where the bootstrapper keeps certificates: a pair of Secrets or a directory. */
export interface CertStore {
  /** Names the place a value lives, for messages: `Secret ns/name key tls.crt`, `file /dir/tls.crt`. */
  where(kind: MaterialKind, key: string): string;
  /** What a user does to start over when stored material is unusable. */
  remedy(kind: MaterialKind): string;
  /** Undefined when nothing is stored yet. */
  loadCa(): Promise<StoredCa | undefined>;
  loadServing(): Promise<StoredServing | undefined>;
  /** Writes only what differs from what is stored; returns true if it wrote anything. */
  saveCa(ca: Required<StoredCa>): Promise<boolean>;
  saveServing(serving: Required<StoredServing>): Promise<boolean>;
}

/** File and key names, shared by both stores (the `kubernetes.io/tls` Secret convention). */
export const TLS_CRT = 'tls.crt';
export const TLS_KEY = 'tls.key';
export const CA_CRT = 'ca.crt';
export const CA_KEY = 'ca.key';
