import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { CertsError } from './errors.ts';
import {
  CA_CRT,
  CA_KEY,
  type CertStore,
  MATERIAL_KEYS,
  type MaterialKind,
  materialFrom,
  PAIR_KEYS,
  type StoredCa,
  type StoredServing,
  TLS_CRT,
  TLS_KEY,
} from './store.ts';

/** The file-system calls the directory store makes: tests pass a fake to inject faults. */
export interface StoreFileSystem {
  readFile(path: string, encoding: 'utf8'): Promise<string>;
  writeFile(path: string, data: string, options: { mode: number; flag?: string }): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  mkdir(path: string, options: { recursive: true; mode: number }): Promise<unknown>;
  chmod(path: string, mode: number): Promise<void>;
  rm(path: string, options: { force: true }): Promise<void>;
}

export const nodeFileSystem: StoreFileSystem = {
  readFile: (path, encoding) => fsp.readFile(path, encoding),
  writeFile: (path, data, options) => fsp.writeFile(path, data, options),
  rename: (from, to) => fsp.rename(from, to),
  mkdir: (path, options) => fsp.mkdir(path, options),
  chmod: (path, mode) => fsp.chmod(path, mode),
  rm: (path, options) => fsp.rm(path, options),
};

export const KEY_FILE_MODE = 0o600;
export const CERT_FILE_MODE = 0o644;

/**
 * Certificates as files in one directory (`--out-dir`), for local runs and docker-compose:
 * `tls.crt`, `tls.key`, `ca.crt` (the bundle) and `ca.key`. Keys are mode 0600, certificates 0644.
 * Each file is written to a temp name and renamed, so a webhook reloading from the directory never
 * reads half a file; the key is renamed into place before the cert, so a reader that sees a new cert
 * also sees its key.
 */
export class DirectoryStore implements CertStore {
  readonly dir: string;
  private readonly fs: StoreFileSystem;

  constructor(dir: string, fs: StoreFileSystem = nodeFileSystem) {
    this.dir = dir;
    this.fs = fs;
  }

  where(_kind: MaterialKind, key: string): string {
    return `file ${join(this.dir, key)}`;
  }

  remedy(kind: MaterialKind): string {
    const { cert, key } = PAIR_KEYS[kind];
    return `Remove ${[cert, key].map((f) => join(this.dir, f)).join(' and ')} (or the whole directory) and run bootstrap again to issue new ones.`;
  }

  loadCa(): Promise<StoredCa | undefined> {
    return this.load('ca');
  }

  loadServing(): Promise<StoredServing | undefined> {
    return this.load('serving');
  }

  /** The files of `kind`, read at once; nothing stored while neither the certificate nor its key is there. */
  private async load<K extends MaterialKind>(kind: K) {
    const names = Object.values(MATERIAL_KEYS[kind]);
    const contents = new Map<string, string | undefined>(
      await Promise.all(names.map(async (name) => [name, await this.read(name)] as const)),
    );
    const { cert, key } = PAIR_KEYS[kind];
    if (contents.get(cert) === undefined && contents.get(key) === undefined) return undefined;
    return materialFrom(kind, (name) => contents.get(name));
  }

  async saveCa(ca: Required<StoredCa>): Promise<boolean> {
    return this.writeAll([
      [CA_KEY, ca.keyPem, KEY_FILE_MODE],
      [CA_CRT, ca.bundlePem, CERT_FILE_MODE],
    ]);
  }

  async saveServing(serving: Required<StoredServing>): Promise<boolean> {
    return this.writeAll([
      [CA_CRT, serving.caPem, CERT_FILE_MODE],
      [TLS_KEY, serving.keyPem, KEY_FILE_MODE],
      [TLS_CRT, serving.certPem, CERT_FILE_MODE],
    ]);
  }

  private async writeAll(files: Array<[string, string, number]>): Promise<boolean> {
    let wrote = false;
    for (const [name, content, mode] of files) {
      if ((await this.read(name)) === content) continue;
      await this.write(name, content, mode);
      wrote = true;
    }
    return wrote;
  }

  private async read(name: string): Promise<string | undefined> {
    const path = join(this.dir, name);
    try {
      return await this.fs.readFile(path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined;
      throw fsError(`read ${path}`, error);
    }
  }

  private async write(name: string, content: string, mode: number): Promise<void> {
    const path = join(this.dir, name);
    const tmp = join(this.dir, `.${name}.tmp`);
    try {
      await this.fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
      await this.fs.rm(tmp, { force: true });
      await this.fs.writeFile(tmp, content, { mode, flag: 'wx' });
      await this.fs.chmod(tmp, mode); // the umask may have narrowed or (for keys) must not widen it
      await this.fs.rename(tmp, path);
    } catch (error) {
      await this.fs.rm(tmp, { force: true }).catch(() => undefined);
      throw fsError(`write ${path}`, error);
    }
  }
}

function fsError(what: string, error: unknown): CertsError {
  const code = (error as NodeJS.ErrnoException).code;
  const hint =
    code === 'EACCES' || code === 'EPERM'
      ? ' The bootstrapper needs read and write access to the directory: fix its owner or mode, or choose another --out-dir.'
      : code === 'ENOSPC'
        ? ' The disk is full.'
        : '';
  return new CertsError('FileSystem', `cannot ${what}: ${(error as Error).message}.${hint}`, { cause: error });
}
