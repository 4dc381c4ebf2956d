import { stat } from 'node:fs/promises';
import { buildCrd, type CustomResourceDefinition, GROUP, KIND } from '../../api/index.ts';
import { type CelEnvironment, type CompiledCrdVersion, compileCrdVersion } from '../../crd/index.ts';
import { stringifyJson } from '../../crd/json-int64.ts';
import type { CrdCache, LazyCrd } from './crd-cache.ts';
import { InputError, parseDocuments, readBytes, type ValidateIO } from './documents.ts';
import { expandPaths } from './inputs.ts';

export interface SchemaSetOptions {
  environment: CelEnvironment;
  version?: string | undefined;
  /** What earlier runs learnt of the same CRD files. */
  cache: CrdCache;
}

interface Typed {
  apiVersion?: unknown;
  kind?: unknown;
}

/**
 * A CRD's integers beyond 2^53 as doubles (the reader keeps them exact as BigInts): the API server
 * holds a schema's bounds as float64, and compiling reads numbers.
 */
const withDoubles = (documents: unknown[]): unknown[] => JSON.parse(stringifyJson(documents)) as unknown[];

/**
 * The CRDs objects are admitted with, by group and kind: the StaticSite CRD built in, then every
 * CustomResourceDefinition in the --crd files and directories (a later one replaces an earlier one
 * of the same group and kind; files of a directory without any are skipped with a note). Each version compiles once, on first use.
 */
export class SchemaSet {
  private readonly byGroupKind = new Map<string, LazyCrd>();
  private readonly compiled = new Map<string, CompiledCrdVersion>();
  private readonly environment: CelEnvironment;
  private readonly forcedVersion: string | undefined;
  private readonly cache: CrdCache;

  private constructor(options: SchemaSetOptions) {
    this.environment = options.environment;
    this.forcedVersion = options.version;
    this.cache = options.cache;
  }

  static async load(crdPaths: readonly string[], io: ValidateIO, options: SchemaSetOptions): Promise<SchemaSet> {
    const set = new SchemaSet(options);
    let builtIn: CustomResourceDefinition | undefined;
    set.add({ group: GROUP, kind: KIND, load: () => (builtIn ??= buildCrd()) });
    for (const path of crdPaths) {
      // A folder of CRDs often holds other manifests too (Gateway API ships an admission policy beside
      // its CRDs): a file found there without a CRD is skipped with a note; a file named is an error.
      const named = path === '-' || !(await stat(path).catch(() => undefined))?.isDirectory();
      for (const file of await expandPaths([path])) {
        const crds = set.cache.crds(await readBytes(file, io), (text) => withDoubles(parseDocuments(text, file)));
        if (crds.length === 0 && named) throw new InputError(`${file}: no CustomResourceDefinition in the file`);
        if (crds.length === 0) io.stderr(`staticsite validate: note: ${file}: no CustomResourceDefinition, skipped\n`);
        for (const crd of crds) set.add(crd);
      }
    }
    return set;
  }

  private add(crd: LazyCrd): void {
    this.byGroupKind.set(`${crd.group}/${crd.kind}`, crd);
  }

  /** The compiled version an object is admitted with, or undefined when no CRD has its kind. */
  versionFor(object: unknown): CompiledCrdVersion | undefined {
    const { apiVersion, kind } = (object ?? {}) as Typed;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') return undefined;
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const crd = this.byGroupKind.get(`${group}/${kind}`)?.load();
    if (!crd) return undefined;
    const served = apiVersion.slice(slash + 1);
    // --version, else the object's version when the CRD has it, else the storage version.
    const version = this.forcedVersion ?? (crd.spec.versions.some((v) => v.name === served) ? served : undefined);
    const key = `${crd.metadata.name}/${version ?? ''}`;
    let compiled = this.compiled.get(key);
    if (!compiled) {
      try {
        const verdict = this.cache.verdict(crd, version);
        compiled = compileCrdVersion(crd, version, { environment: this.environment, accepted: verdict.accepted });
        if (!verdict.accepted) verdict.remember();
      } catch (error) {
        // A version the CRD lacks, or rules the API server would refuse when the CRD is written.
        throw new InputError((error as Error).message);
      }
      this.compiled.set(key, compiled);
    }
    return compiled;
  }
}
