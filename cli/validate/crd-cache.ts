/**
 * What `staticsite validate` remembers of CRD files between runs, by content: the CRDs a file holds
 * (its YAML parsed once; a run reads back only the CRDs its objects need) and which CRD versions the API server's CRD checks accept (their defaults and
 * patterns checked once). Keys are SHA-256 of the content and of the build, so an edited file or a new
 * engine is a miss; a cache that cannot be read or written is a miss too, never an error, and a CRD
 * version that fails its checks is never remembered. Runs from source have no build id: no cache.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CustomResourceDefinition } from '../../api/index.ts';
import { userCacheDir } from '../cache-home.ts';
import { BUILD_ID_FILE } from './build-id.ts';

/** $XDG_CACHE_HOME/staticsite/validate, else ~/.cache/staticsite/validate. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return userCacheDir('validate', env);
}

/** The build this process runs, or undefined when it runs from source. */
export function runningBuildId(): string | undefined {
  try {
    return readFileSync(new URL(`./${BUILD_ID_FILE}`, import.meta.url), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

const sha256 = (...parts: Array<string | Buffer>) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex');
};

/** A CRD of a file: its group and kind at once, the whole object only when an object of its kind needs it. */
export interface LazyCrd {
  group: string;
  kind: string;
  load(): CustomResourceDefinition;
}

const isCrd = (d: unknown): d is CustomResourceDefinition =>
  (d as { kind?: unknown } | null)?.kind === 'CustomResourceDefinition';

const groupKind = (crd: CustomResourceDefinition): [string, string] => [crd.spec.group, crd.spec.names.kind];

/**
 * A file's CRDs as remembered: a first line with the group, kind and line hash of each CRD (after that
 * index's own hash), then each CRD's JSON on a line of its own (JSON.stringify never writes a line
 * break), so a run parses only the CRDs it uses, and a damaged entry is found without parsing the rest.
 */
export function encodeEntry(crds: readonly CustomResourceDefinition[]): string {
  const lines = crds.map((crd) => JSON.stringify(crd));
  const index = JSON.stringify(crds.map((crd, i) => [...groupKind(crd), sha256(lines[i] ?? '')]));
  return [`${sha256(index)} ${index}`, ...lines].join('\n');
}

type IndexEntry = [group: string, kind: string, lineHash: string];

/** The entry's index and CRD lines, or undefined when its index is damaged or names other lines. */
function decodeEntry(text: string): { index: IndexEntry[]; lines: string[] } | undefined {
  const [head = '', ...lines] = text.split('\n');
  const space = head.indexOf(' ');
  const indexJson = head.slice(space + 1);
  if (space < 0 || head.slice(0, space) !== sha256(indexJson)) return undefined;
  let index: unknown;
  try {
    index = JSON.parse(indexJson);
  } catch {
    return undefined;
  }
  const wellFormed =
    Array.isArray(index) &&
    index.length === lines.length &&
    index.every((e) => Array.isArray(e) && e.length === 3 && e.every((part) => typeof part === 'string'));
  return wellFormed ? { index: index as IndexEntry[], lines } : undefined;
}

export class CrdCache {
  private readonly dir: string | undefined;
  private readonly buildId: string;
  /** Each CRD a LazyCrd loaded, by the content it came from: its file's key and its place. */
  private readonly contentKeys = new WeakMap<object, string>();

  /** `dir` undefined, or no build id: nothing is remembered. */
  constructor(dir: string | undefined, buildId: string | undefined) {
    this.dir = buildId === undefined ? undefined : dir;
    this.buildId = buildId ?? '';
  }

  /**
   * The CRDs of a file's bytes, from the cache when these bytes were read before, else from `parse`
   * (the file's documents). A remembered CRD that does not read back as the CRD its index names is a
   * miss: the file is parsed again.
   */
  crds(bytes: Buffer, parse: (text: string) => unknown[]): LazyCrd[] {
    const fileKey = sha256(this.buildId, bytes);
    const file = this.path('crds', fileKey);
    let parsed: CustomResourceDefinition[] | undefined;
    const parseAll = () => {
      if (!parsed) {
        parsed = parse(bytes.toString('utf8')).filter(isCrd);
        if (file) this.write(file, encodeEntry(parsed));
      }
      return parsed;
    };
    const remembered = file === undefined ? undefined : decodeEntry(this.readText(file) ?? '');
    const keyed = (crd: CustomResourceDefinition, i: number) => {
      this.contentKeys.set(crd, `${fileKey}#${i}`);
      return crd;
    };
    if (!remembered) {
      return parseAll().map((crd, i) => {
        const [group, kind] = groupKind(crd);
        return { group, kind, load: () => keyed(crd, i) };
      });
    }
    const readBack = (group: string, kind: string, lineHash: string, i: number): CustomResourceDefinition => {
      const line = remembered.lines[i] ?? '';
      const crd = sha256(line) === lineHash ? this.parseLine(line) : undefined;
      if (crd && crd.spec?.group === group && crd.spec?.names?.kind === kind) return keyed(crd, i);
      const again = parseAll().findIndex((c) => c.spec.group === group && c.spec.names.kind === kind);
      // only an index written with its hashes recomputed can name a CRD the file lacks
      if (again < 0) throw new Error(`the cache names a CRD ${kind}.${group} its file lacks`);
      return keyed(parseAll()[again] as CustomResourceDefinition, again);
    };
    return remembered.index.map(([group, kind, lineHash], i) => {
      let crd: CustomResourceDefinition | undefined;
      return { group, kind, load: () => (crd ??= readBack(group, kind, lineHash, i)) };
    });
  }

  private parseLine(line: string): CustomResourceDefinition | undefined {
    try {
      const value: unknown = JSON.parse(line);
      return isCrd(value) ? value : undefined;
    } catch {
      return undefined;
    }
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

  /** By the bytes the CRD was read from when it came from `crds` (hashing a large CRD again costs ms). */
  private acceptedKey(crd: unknown, version: string | undefined): string {
    const content = (typeof crd === 'object' && crd !== null && this.contentKeys.get(crd)) || JSON.stringify(crd);
    return sha256(this.buildId, content, version ?? '');
  }

  private path(kind: string, key: string): string | undefined {
    return this.dir === undefined ? undefined : join(this.dir, kind, key);
  }

  private readText(file: string): string | undefined {
    try {
      return readFileSync(file, 'utf8');
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
