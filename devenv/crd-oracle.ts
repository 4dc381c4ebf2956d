import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { CustomResourceDefinition } from '../api/index.ts';
import type { StatusCause } from '../crd/index.ts';
import { parseJsonInt64, stringifyJson } from '../crd/json-int64.ts';
import { controlPlaneBinDir } from './controlplane.ts';

/**
 * The Go oracle (devenv/controlplane/cmd/crd-oracle): kube-apiserver's own apiextensions code at
 * the control plane's version, run in-process on one request per line. It answers what the server
 * would for a CRD's create and for an object's create or update (dry run), without a server.
 */
export interface OracleRequest {
  crd: CustomResourceDefinition | Record<string, unknown>;
  /** The served version the object is sent to; default the storage version. */
  version?: string;
  namespace?: string;
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  /** Absent: only the CRD's create is answered. */
  object?: unknown;
  /** The object as JSON text, sent as it is (repeated keys, `1e400`, lone surrogates): instead of `object`. */
  objectText?: string;
  /** The stored object of an update, as a GET returns it. */
  oldObject?: unknown;
  /** Replaces the random suffix of a name made from metadata.generateName, so that answers repeat. */
  nameSuffix?: string;
}

/** What a client sees of one request (the shape of the parity suites' observations). */
export interface OracleObservation {
  code: number;
  message: string;
  causes: StatusCause[];
  warnings: string[];
  object?: unknown;
}

export interface OracleAnswer {
  /** The CRD's create: 201, or the server's refusal (422 with causes). */
  crd: OracleObservation;
  /** The object's admission; absent when no object was sent or the CRD is refused. */
  admission?: OracleObservation;
}

interface Wire {
  id: string;
  crd?: OracleObservation;
  admission?: OracleObservation;
  error?: string;
}

export class CrdOracle {
  private readonly pending = new Map<string, { resolve: (a: OracleAnswer) => void; reject: (e: Error) => void }>();
  private next = 0;
  private stderr = '';
  private exited: Error | undefined;

  private readonly child: ChildProcessWithoutNullStreams;

  private constructor(child: ChildProcessWithoutNullStreams) {
    this.child = child;
    createInterface({ input: child.stdout }).on('line', (line) => this.answer(line));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-4096);
    });
    child.on('exit', (code, signal) => {
      this.exited = new Error(`crd-oracle exited (${signal ?? code}): ${this.stderr.trim()}`);
      for (const p of this.pending.values()) p.reject(this.exited);
      this.pending.clear();
    });
  }

  /** Starts the oracle from the control plane's build (built into the cache on first use). */
  static async start(binDir?: string): Promise<CrdOracle> {
    const dir = binDir ?? (await controlPlaneBinDir());
    const child = spawn(join(dir, 'crd-oracle'), [], { stdio: ['pipe', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    return new CrdOracle(child);
  }

  ask(request: OracleRequest): Promise<OracleAnswer> {
    if (this.exited) return Promise.reject(this.exited);
    const id = String(this.next++);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const { objectText, ...rest } = request;
      const line = stringifyJson({ id, ...rest });
      // The oracle reads `object` as raw bytes (json.RawMessage): the text goes in as written.
      const withText = objectText === undefined ? line : `${line.slice(0, -1)},"object":${objectText}}`;
      this.child.stdin.write(`${withText}\n`);
    });
  }

  private answer(line: string): void {
    const wire = parseJsonInt64(line) as Wire;
    const p = this.pending.get(wire.id);
    if (!p) return;
    this.pending.delete(wire.id);
    if (wire.error || !wire.crd) p.reject(new Error(`crd-oracle: ${wire.error ?? 'no answer'}`));
    else p.resolve({ crd: wire.crd, ...(wire.admission && { admission: wire.admission }) });
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const exit = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end();
    await exit;
  }
}
