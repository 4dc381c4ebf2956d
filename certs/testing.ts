/**
 * Test doubles for the bootstrapper's seams: a settable clock, an in-memory store, and an in-memory
 * API server for Secrets, webhook configurations and CRDs. Used by the unit tests; importable by
 * anyone who drives the bootstrapper in their own tests.
 */
import type { Clock, Sleep } from './clock.ts';
import type { KubeApi, KubeResponse } from './kube.ts';
import type { CertStore, MaterialKind, StoredCa, StoredServing } from './store.ts';

export class ManualClock implements Clock {
  private time: number;

  constructor(start: Date | string) {
    this.time = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.time);
  }

  set(to: Date | string): void {
    this.time = new Date(to).getTime();
  }

  advance(ms: number): void {
    this.time += ms;
  }
}

/** A Sleep that advances a ManualClock instead of waiting, and records each delay. */
export function manualSleep(clock: ManualClock, delays: number[] = []): Sleep & { delays: number[] } {
  const sleep = async (ms: number) => {
    delays.push(ms);
    clock.advance(ms);
  };
  return Object.assign(sleep, { delays });
}

/** An in-memory CertStore that records every save, in order, into `log` (shared with a fake injector). */
export class MemoryStore implements CertStore {
  ca: StoredCa | undefined;
  serving: StoredServing | undefined;
  readonly log: string[];

  constructor(log: string[] = []) {
    this.log = log;
  }

  where(kind: MaterialKind, key: string): string {
    return `memory ${kind} ${key}`;
  }

  remedy(kind: MaterialKind): string {
    return `Clear the ${kind} material.`;
  }

  async loadCa(): Promise<StoredCa | undefined> {
    return this.ca && { ...this.ca };
  }

  async loadServing(): Promise<StoredServing | undefined> {
    return this.serving && { ...this.serving };
  }

  async saveCa(ca: Required<StoredCa>): Promise<boolean> {
    if (this.ca?.bundlePem === ca.bundlePem && this.ca.keyPem === ca.keyPem) return false;
    this.ca = { ...ca };
    this.log.push('save-ca');
    return true;
  }

  async saveServing(serving: Required<StoredServing>): Promise<boolean> {
    const s = this.serving;
    if (s?.certPem === serving.certPem && s.keyPem === serving.keyPem && s.caPem === serving.caPem) return false;
    this.serving = { ...serving };
    this.log.push('save-serving');
    return true;
  }
}

export interface RecordedRequest {
  method: string;
  path: string;
  body?: unknown;
  contentType?: string;
}

type Json = Record<string, unknown>;

/**
 * An in-memory API server, just enough for the bootstrapper: GET, POST to a collection, merge patch
 * (with the resourceVersion precondition) and JSON patch (`test`, `add`, `replace`). `fail` makes the
 * next matching request answer with a given status, as the real server would (a Status body).
 */
export class FakeKubeApi implements KubeApi {
  readonly objects = new Map<string, Json>();
  readonly requests: RecordedRequest[] = [];
  private readonly failures: Array<{ method: string; path: string; status: number; message: string; times: number }> =
    [];
  private version = 1;

  put(path: string, object: Json): void {
    const metadata = { ...((object.metadata as Json) ?? {}), resourceVersion: String(this.version++) };
    this.objects.set(path, structuredClone({ ...object, metadata }));
  }

  get(path: string): Json | undefined {
    const o = this.objects.get(path);
    return o && structuredClone(o);
  }

  fail(method: string, path: string, status: number, message: string, times = 1): void {
    this.failures.push({ method, path, status, message, times });
  }

  writes(): RecordedRequest[] {
    return this.requests.filter((r) => r.method !== 'GET');
  }

  async request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<KubeResponse<T>> {
    this.requests.push({
      method,
      path,
      ...(body !== undefined && { body: structuredClone(body) }),
      ...(contentType && { contentType }),
    });
    const failure = this.failures.find((f) => f.method === method && f.path === path && f.times > 0);
    if (failure) {
      failure.times--;
      return status(failure.status, failure.message) as KubeResponse<T>;
    }
    if (method === 'GET') {
      const o = this.get(path);
      return (o ? { status: 200, body: o } : status(404, `${lastSegment(path)} not found`)) as KubeResponse<T>;
    }
    if (method === 'POST') {
      const o = body as Json;
      const name = (o.metadata as Json).name as string;
      const target = `${path}/${name}`;
      if (this.objects.has(target)) return status(409, `"${name}" already exists`) as KubeResponse<T>;
      this.put(target, o);
      return { status: 201, body: this.get(target) as T };
    }
    if (method === 'PATCH') {
      const current = this.get(path);
      if (!current) return status(404, `${lastSegment(path)} not found`) as KubeResponse<T>;
      let next: Json;
      if (contentType === 'application/merge-patch+json') {
        const rv = ((body as Json).metadata as Json | undefined)?.resourceVersion;
        if (rv !== undefined && rv !== (current.metadata as Json).resourceVersion) {
          return status(
            409,
            'Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again',
          ) as KubeResponse<T>;
        }
        next = mergePatch(current, body) as Json;
      } else if (contentType === 'application/json-patch+json') {
        try {
          next = jsonPatch(current, body as Array<{ op: string; path: string; value?: unknown }>);
        } catch (error) {
          return status(422, (error as Error).message) as KubeResponse<T>;
        }
      } else {
        return status(415, `unsupported patch type ${contentType}`) as KubeResponse<T>;
      }
      this.put(path, next);
      return { status: 200, body: this.get(path) as T };
    }
    return status(405, `method ${method} not allowed`) as KubeResponse<T>;
  }
}

function status(code: number, message: string): KubeResponse {
  return { status: code, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code } };
}

function lastSegment(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** RFC 7386. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Json = target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Json) } : {};
  for (const [k, v] of Object.entries(patch as Json)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** RFC 6902, the ops the bootstrapper sends. */
export function jsonPatch(doc: Json, ops: Array<{ op: string; path: string; value?: unknown }>): Json {
  const out = structuredClone(doc);
  for (const op of ops) {
    const parts = op.path
      .split('/')
      .slice(1)
      .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
    const key = parts.pop() as string;
    let parent: unknown = out;
    for (const p of parts) {
      parent = (parent as Json | undefined)?.[p];
      if (parent === undefined || parent === null) throw new Error(`path ${op.path}: missing parent`);
    }
    const container = parent as Json;
    if (op.op === 'test') {
      if (JSON.stringify(container[key]) !== JSON.stringify(op.value)) {
        throw new Error(
          `the server rejected our request due to an error in our request: testing value ${op.path} failed`,
        );
      }
    } else if (op.op === 'add' || op.op === 'replace') {
      if (op.op === 'replace' && !(key in container)) throw new Error(`path ${op.path}: replace of a missing member`);
      container[key] = structuredClone(op.value);
    } else {
      throw new Error(`unsupported op ${op.op}`);
    }
  }
  return out;
}
