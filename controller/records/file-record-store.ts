import { randomBytes } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import type { ExternalRecord, PublishOutcome, RecordStore, RemoveOutcome } from './record-store.ts';

/** The file operations the store needs: node:fs/promises in production, a fake with faults in tests. */
export interface RecordFileSystem {
  readFile(path: string, encoding: 'utf8'): Promise<string>;
  writeFile(path: string, data: string, options: { mode: number }): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  mkdir(path: string, options: { recursive: true }): Promise<unknown>;
}

export const nodeFileSystem: RecordFileSystem = {
  readFile: (path, encoding) => fsp.readFile(path, encoding),
  writeFile: (path, data, options) => fsp.writeFile(path, data, options),
  rename: (from, to) => fsp.rename(from, to),
  unlink: (path) => fsp.unlink(path),
  mkdir: (path, options) => fsp.mkdir(path, options),
};

function isMissing(error: unknown): boolean {
  return (error as { code?: string }).code === 'ENOENT';
}

/** `<namespace>_<name>.json`: neither part can contain `_`, so the name is unambiguous. */
export function recordFileName(siteKey: string): string {
  return `${siteKey.replace('/', '_')}.json`;
}

export function recordText(record: ExternalRecord): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}

/**
 * One JSON file per site in a directory. Writes are atomic (a temp file in the same directory, then
 * rename) and happen only when the content would change.
 */
export class FileRecordStore implements RecordStore {
  readonly dir: string;
  private readonly fs: RecordFileSystem;
  private ready: Promise<unknown> | undefined;

  constructor(dir: string, fs: RecordFileSystem = nodeFileSystem) {
    this.dir = dir;
    this.fs = fs;
  }

  async publish(siteKey: string, record: ExternalRecord): Promise<PublishOutcome> {
    this.ready ??= this.fs.mkdir(this.dir, { recursive: true }).catch((error) => {
      this.ready = undefined;
      throw error;
    });
    await this.ready;
    const path = join(this.dir, recordFileName(siteKey));
    const text = recordText(record);
    let current: string | undefined;
    try {
      current = await this.fs.readFile(path, 'utf8');
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    if (current === text) return 'unchanged';
    const temp = join(this.dir, `.${recordFileName(siteKey)}.${randomBytes(6).toString('hex')}.tmp`);
    await this.fs.writeFile(temp, text, { mode: 0o644 });
    try {
      await this.fs.rename(temp, path);
    } catch (error) {
      await this.fs.unlink(temp).catch(() => {});
      throw error;
    }
    return current === undefined ? 'created' : 'updated';
  }

  async remove(siteKey: string): Promise<RemoveOutcome> {
    try {
      await this.fs.unlink(join(this.dir, recordFileName(siteKey)));
      return 'removed';
    } catch (error) {
      if (isMissing(error)) return 'absent';
      throw error;
    }
  }
}
