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

/** Each kind's certificate and the key that belongs to it: the file (or Secret key) of each. */
export const PAIR_KEYS: Readonly<Record<MaterialKind, { cert: string; key: string }>> = {
  ca: { cert: CA_CRT, key: CA_KEY },
  serving: { cert: TLS_CRT, key: TLS_KEY },
};

/** Each kind's material field by field, and the file (or Secret key) each field is stored under. */
export const MATERIAL_KEYS = {
  ca: { bundlePem: CA_CRT, keyPem: CA_KEY },
  serving: { certPem: TLS_CRT, keyPem: TLS_KEY, caPem: CA_CRT },
} as const satisfies Record<MaterialKind, Record<string, string>>;

interface Material {
  ca: StoredCa;
  serving: StoredServing;
}

/** The material of `kind` from the value stored under each of its keys; a field with none is left out. */
export function materialFrom<K extends MaterialKind>(
  kind: K,
  storedAt: (key: string) => string | undefined,
): Material[K] {
  const material: Record<string, string> = {};
  for (const [field, key] of Object.entries(MATERIAL_KEYS[kind])) {
    const value = storedAt(key);
    if (value !== undefined) material[field] = value;
  }
  return material as Material[K];
}

/** The value to store under each key of `kind`'s material. */
export function keyedMaterial<K extends MaterialKind>(
  kind: K,
  material: Required<Material[K]>,
): Record<string, string> {
  const fields = material as Record<string, string>;
  return Object.fromEntries(Object.entries(MATERIAL_KEYS[kind]).map(([field, key]) => [key, fields[field] ?? '']));
}
