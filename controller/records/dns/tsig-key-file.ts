import { readFile, stat } from 'node:fs/promises';
import type { TsigKey } from './wire.ts';

/** The file system calls a key file needs; tests drive changes and faults through them. */
export interface KeyFileSystem {
  stat(path: string): Promise<{ mtimeMs: number; ctimeMs: number; size: number; ino: number }>;
  readFile(path: string): Promise<string>;
}

const nodeFileSystem: KeyFileSystem = { stat, readFile: (path) => readFile(path, 'utf8') };

/**
 * A TSIG key read from a file, and read again whenever the file changes (a rotated Secret: the
 * kubelet swaps the mounted files at once), so a new key is used without a restart. A changed file
 * that cannot be read or parsed is an error naming the file, each time the key is asked for, until
 * it is fixed: an old key is never used in its place.
 */
export class TsigKeyFile {
  private readonly path: string;
  private readonly parse: (text: string, path: string) => TsigKey;
  private readonly fs: KeyFileSystem;
  private loaded: { version: string; key: TsigKey } | undefined;

  constructor(path: string, parse: (text: string, path: string) => TsigKey, fs: KeyFileSystem = nodeFileSystem) {
    this.path = path;
    this.parse = parse;
    this.fs = fs;
  }

  async current(): Promise<TsigKey> {
    let version: string;
    let text: string;
    try {
      const info = await this.fs.stat(this.path);
      version = `${info.ino}:${info.mtimeMs}:${info.ctimeMs}:${info.size}`;
      if (this.loaded?.version === version) return this.loaded.key;
      text = await this.fs.readFile(this.path);
    } catch (error) {
      throw new Error(`cannot read the TSIG key file ${this.path}: ${(error as Error).message}`);
    }
    const key = this.parse(text, this.path);
    this.loaded = { version, key };
    return key;
  }
}
