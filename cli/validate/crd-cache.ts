/**
 * What `staticsite validate` remembers of CRD files between runs, by content: the CRDs a file holds
 * (its YAML parsed once) and which CRD versions the API server's CRD checks accept (their defaults and
 * patterns checked once). Keys are SHA-256 of the content and of the build, so an edited file or a new
 * engine is a miss; a cache that cannot be read or written is a miss too, never an error, and a CRD
 * version that fails its checks is never remembered. Runs from source have no build id: no cache.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { BUILD_ID_FILE } from './build-id.ts';

/** $XDG_CACHE_HOME/staticsite/validate, else ~/.cache/staticsite/validate. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'staticsite', 'validate');
}

/** The build this process runs, or undefined when it runs from source. */
export function runningBuildId(): string | undefined {
  try {
    return readFileSync(new URL(`./${BUILD_ID_FILE}`, import.meta.url), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

const sha256 = (...parts: string[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex');
};

export class CrdCache {
  private readonly dir: string | undefined;
  private readonly buildId: string;
  /** Each document `documents` returned, by the content it came from: its text's key and its place. */
  private readonly contentKeys = new WeakMap<object, string>();

  /** `dir` undefined, or no build id: nothing is remembered. */
  constructor(dir: string | undefined, buildId: string | undefined) {
    this.dir = buildId === undefined ? undefined : dir;
    this.buildId = buildId ?? '';
  }

  /** The documents `parse` finds in `text` that `keep` keeps, from the cache when this text was parsed before. */
  async documents<T>(text: string, parse: () => Promise<unknown[]>, keep: (d: unknown) => d is T): Promise<T[]> {
    const textKey = sha256(this.buildId, text);
    const file = this.path('documents', textKey);
    const remembered = file && this.read(file);
    let documents: T[];
    if (Array.isArray(remembered) && remembered.every(keep)) documents = remembered;
    else {
      documents = (await parse()).filter(keep);
      if (file) this.write(file, JSON.stringify(documents));
    }
    documents.forEach((d, i) => {
      if (typeof d === 'object' && d !== null) this.contentKeys.set(d, `${textKey}#${i}`);
    });
    return documents;
  }

  /**
   * What an earlier run learnt of this version of this CRD: whether it passed the CRD checks, and how to
   * remember that it did (one key, computed once).
   */
  verdict(crd: unknown, version: string | undefined): { accepted: boolean; remember: () => void } {
    const file = this.path('accepted', this.acceptedKey(crd, version));
    return {
      accepted: file !== undefined && existsSync(file),
      remember: () => {
        if (file) this.write(file, '');
      },
    };
  }

  /** By the text the CRD was read from when it came from `documents` (hashing a large CRD again costs ms). */
  private acceptedKey(crd: unknown, version: string | undefined): string {
    const content = (typeof crd === 'object' && crd !== null && this.contentKeys.get(crd)) || JSON.stringify(crd);
    return sha256(this.buildId, content, version ?? '');
  }

  private path(kind: string, key: string): string | undefined {
    return this.dir === undefined ? undefined : join(this.dir, kind, key);
  }

  private read(file: string): unknown {
    try {
      return JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      return undefined;
    }
  }

  /** Written whole or not at all: a temporary file renamed into place. */
  private write(file: string, content: string): void {
    try {
      mkdirSync(join(file, '..'), { recursive: true });
      const temporary = `${file}.${process.pid}.tmp`;
      writeFileSync(temporary, content);
      renameSync(temporary, file);
    } catch {
      // a cache that cannot be written is only slower
    }
  }
}
