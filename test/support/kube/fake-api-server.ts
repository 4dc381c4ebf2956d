import type { KubeObject, WatchEvent } from '../../../kube/objects.ts';
import {
  JSON_PATCH_CONTENT_TYPE,
  type JsonPatchOperation,
  MERGE_PATCH_CONTENT_TYPE,
} from '../../../kube/patch-types.ts';
import type {
  KubeTransport,
  Query,
  TransportRequest,
  TransportResponse,
  TransportStream,
} from '../../../kube/transport.ts';
import { applyJsonPatch, applyMergePatch } from './patches.ts';

/** A recorded request to the fake API server. */
export interface RecordedRequest {
  method: string;
  path: string;
  query?: Query;
  body?: unknown;
  /** Only when the request named one (patches). */
  contentType?: string;
}

/** A failure to answer with: a Status of this code and reason; the message defaults to the reason. */
export type Fault = { status: number; reason: string; message?: string };

class EventStream implements AsyncIterable<string> {
  private readonly lines: string[] = [];
  private wake: (() => void) | undefined;
  private closed = false;
  readonly path: string;
  readonly query: Query;

  constructor(path: string, query: Query, signal: AbortSignal) {
    this.path = path;
    this.query = query;
    signal.addEventListener('abort', () => this.close(), { once: true });
  }

  push(event: WatchEvent): void {
    this.lines.push(JSON.stringify(event));
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    for (;;) {
      const line = this.lines.shift();
      if (line !== undefined) {
        yield line;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }
}

/** `Lease.coordination.k8s.io`: how the API server names an object's kind in a precondition failure. */
function kindAndGroup(collection: string, object: KubeObject): string {
  const parts = collection.split('/').filter(Boolean);
  const kind = object.kind ?? parts[parts.length - 1] ?? '';
  return parts[0] === 'apis' && parts[1] ? `${kind}.${parts[1]}` : kind;
}

function labelsMatch(object: KubeObject, selector: string | undefined): boolean {
  if (!selector) return true;
  return selector.split(',').every((term) => {
    const [k, v] = term.split('=');
    return object.metadata.labels?.[k ?? ''] === v;
  });
}

/**
 * An in-memory API server for unit tests, speaking KubeTransport: collections keyed by path,
 * resourceVersions, optimistic concurrency (409 Conflict on a stale resourceVersion, in a PUT or as
 * a merge patch's precondition), 409 AlreadyExists, /status subresources, merge and JSON patches,
 * label-selector lists and watches, and injectable faults. Not a faithful API server: only what the
 * controller's, the webhook informer's and the cert bootstrapper's calls need.
 */
export class FakeApiServer implements KubeTransport {
  readonly requests: RecordedRequest[] = [];
  readonly streams: EventStream[] = [];
  private readonly objects = new Map<string, KubeObject>();
  private rv = 100;
  private uid = 1;
  private readonly faults: Array<{ match: (r: RecordedRequest) => boolean; fault: Fault; times: number }> = [];
  private readonly watchFaults: Array<{ status: number; body: unknown }> = [];
  private readonly hangs: Array<(r: RecordedRequest) => boolean> = [];

  /** Makes the next `times` requests matching `match` fail with `status`/`reason`. */
  failNext(match: (r: RecordedRequest) => boolean, fault: Fault, times = 1): void {
    this.faults.push({ match, fault, times });
  }

  /**
   * Every later request matching `match` is never answered (a partition that drops packets): it
   * fails only when its signal aborts.
   */
  hang(match: (r: RecordedRequest) => boolean): void {
    this.hangs.push(match);
  }

  /** Makes the next watch request answer with a non-200 status. */
  failNextWatch(status: number, body: unknown): void {
    this.watchFaults.push({ status, body });
  }

  writes(): RecordedRequest[] {
    return this.requests.filter((r) => r.method !== 'GET');
  }

  /** Puts an object in place as another client would (bumps resourceVersion, notifies watches). */
  seed<T extends KubeObject>(collection: string, object: T): T {
    const stored = this.store(collection, structuredClone(object), 'ADDED');
    return stored as T;
  }

  /** Every object of a collection, as stored. */
  list<T extends KubeObject>(collection: string): T[] {
    return [...this.objects.entries()]
      .filter(([k]) => k.slice(0, k.lastIndexOf('/')) === collection)
      .map(([, o]) => structuredClone(o) as T);
  }

  read<T extends KubeObject>(collection: string, name: string): T | undefined {
    const o = this.objects.get(`${collection}/${name}`);
    return o ? (structuredClone(o) as T) : undefined;
  }

  /** Changes an object as another client would. */
  modify<T extends KubeObject>(collection: string, name: string, change: (o: T) => void): T {
    const o = this.read<T>(collection, name);
    if (!o) throw new Error(`no ${collection}/${name}`);
    change(o);
    return this.store(collection, o, 'MODIFIED') as T;
  }

  remove(collection: string, name: string): void {
    const key = `${collection}/${name}`;
    const o = this.objects.get(key);
    if (!o) return;
    this.objects.delete(key);
    const deleted = { ...o, metadata: { ...o.metadata, resourceVersion: String(++this.rv) } };
    this.broadcast(collection, { type: 'DELETED', object: deleted });
  }

  /** Sends an arbitrary event (a BOOKMARK or an ERROR) to the open watches of a collection. */
  sendToWatches(collection: string, event: WatchEvent): void {
    this.broadcast(collection, event);
  }

  /** Ends every open watch on a collection, as a server timeout does. */
  closeWatches(collection?: string): void {
    for (const s of this.streams) if (!collection || s.path === collection) s.close();
  }

  openWatches(collection?: string): number {
    return this.streams.filter((s) => !s.isClosed && (!collection || s.path === collection)).length;
  }

  resourceVersion(): string {
    return String(this.rv);
  }

  private store(collection: string, object: KubeObject, type: 'ADDED' | 'MODIFIED'): KubeObject {
    object.metadata.resourceVersion = String(++this.rv);
    object.metadata.uid ??= `uid-${this.uid++}`;
    object.metadata.generation ??= 1;
    object.metadata.creationTimestamp ??= '2026-11-29T12:00:00Z';
    this.objects.set(`${collection}/${object.metadata.name}`, structuredClone(object));
    this.broadcast(collection, { type, object: structuredClone(object) });
    return structuredClone(object);
  }

  private broadcast(collection: string, event: WatchEvent): void {
    for (const s of this.streams) {
      if (s.isClosed || s.path !== collection) continue;
      if (event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED') {
        if (!labelsMatch(event.object as KubeObject, s.query.labelSelector as string | undefined)) continue;
      }
      s.push(event);
    }
  }

  private fault(r: RecordedRequest): Fault | undefined {
    const i = this.faults.findIndex((f) => f.match(r));
    if (i < 0) return undefined;
    const entry = this.faults[i];
    if (!entry) return undefined;
    entry.times--;
    if (entry.times <= 0) this.faults.splice(i, 1);
    return entry.fault;
  }

  async request(method: string, path: string, options: TransportRequest = {}): Promise<TransportResponse> {
    const r: RecordedRequest = {
      method,
      path,
      query: options.query,
      body: options.body,
      ...(options.contentType && { contentType: options.contentType }),
    };
    this.requests.push(r);
    if (this.hangs.some((match) => match(r))) return hangUntilAborted(options.signal);
    await Promise.resolve();
    const fault = this.fault(r);
    if (fault) return this.status(fault.status, fault.reason, fault.message ?? fault.reason);
    const parts = path.split('/');
    const sub = parts[parts.length - 1] === 'status' ? 'status' : undefined;
    const objectParts = sub ? parts.slice(0, -1) : parts;
    const isCollection = this.isCollectionPath(path);
    if (method === 'GET' && isCollection) {
      const items = [...this.objects.entries()]
        .filter(
          ([k, o]) => k.slice(0, k.lastIndexOf('/')) === path && labelsMatch(o, options.query?.labelSelector as string),
        )
        .map(([, o]) => structuredClone(o));
      return this.ok({ kind: 'List', metadata: { resourceVersion: String(this.rv) }, items });
    }
    const body = structuredClone(options.body) as KubeObject | undefined;
    if (method === 'POST' && isCollection && body) {
      const key = `${path}/${body.metadata.name}`;
      if (this.objects.has(key)) return this.status(409, 'AlreadyExists', `"${body.metadata.name}" already exists`);
      return this.ok(this.store(path, body, 'ADDED'), 201);
    }
    const name = decodeURIComponent(objectParts[objectParts.length - 1] ?? '');
    const collection = objectParts.slice(0, -1).join('/');
    const key = `${collection}/${name}`;
    const current = this.objects.get(key);
    if (!current) return this.status(404, 'NotFound', `"${name}" not found`);
    if (method === 'GET') return this.ok(structuredClone(current));
    if (method === 'PUT' && body) {
      if (body.metadata.resourceVersion !== current.metadata.resourceVersion) {
        return this.status(
          409,
          'Conflict',
          'the object has been modified; please apply your changes to the latest version and try again',
        );
      }
      const next = structuredClone(current) as KubeObject & Record<string, unknown>;
      const incoming = body as KubeObject & Record<string, unknown>;
      if (sub === 'status') next.status = incoming.status;
      else {
        for (const k of Object.keys(next)) if (k !== 'status' && k !== 'metadata') delete next[k];
        for (const [k, v] of Object.entries(incoming)) if (k !== 'status' && k !== 'metadata') next[k] = v;
        const before = current as KubeObject & Record<string, unknown>;
        const specChanged = JSON.stringify(before.spec) !== JSON.stringify(incoming.spec);
        next.metadata = {
          ...incoming.metadata,
          uid: current.metadata.uid,
          generation: (current.metadata.generation ?? 1) + (specChanged ? 1 : 0),
        };
      }
      if (JSON.stringify(next) === JSON.stringify(current)) return this.ok(structuredClone(current));
      if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) {
        this.objects.delete(key);
        const gone = { ...next, metadata: { ...next.metadata, resourceVersion: String(++this.rv) } };
        this.broadcast(collection, { type: 'DELETED', object: gone });
        return this.ok(gone);
      }
      return this.ok(this.store(collection, next, 'MODIFIED'));
    }
    if (method === 'PATCH' && options.body !== undefined) return this.patch(collection, current, options);
    if (method === 'DELETE') return this.delete(collection, current, options);
    return this.status(405, 'MethodNotAllowed', method);
  }

  /**
   * DELETE with DeleteOptions preconditions (uid, resourceVersion): a mismatch is a 409 Conflict in
   * the words kube-apiserver v1.37 answers with (measured). An object with finalizers only gets its
   * deletionTimestamp; any other is removed, its watchers told, and a Success Status returned.
   */
  private delete(collection: string, current: KubeObject, options: TransportRequest): TransportResponse {
    const name = current.metadata.name ?? '';
    const preconditions = (options.body as { preconditions?: { uid?: string; resourceVersion?: string } } | undefined)
      ?.preconditions;
    const failed = (what: string, wanted: string, actual: string | undefined, why: string) =>
      this.status(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${kindAndGroup(collection, current)} "${name}": the ${what} in the precondition (${wanted}) does not match the ${what} in record (${actual ?? ''}). The object might have been ${why}`,
      );
    if (preconditions?.uid !== undefined && preconditions.uid !== current.metadata.uid) {
      return failed('UID', preconditions.uid, current.metadata.uid, 'deleted and then recreated');
    }
    if (
      preconditions?.resourceVersion !== undefined &&
      preconditions.resourceVersion !== current.metadata.resourceVersion
    ) {
      return failed('ResourceVersion', preconditions.resourceVersion, current.metadata.resourceVersion, 'modified');
    }
    if ((current.metadata.finalizers ?? []).length > 0) {
      const next = structuredClone(current);
      next.metadata.deletionTimestamp ??= '2026-11-29T12:00:00Z';
      return this.ok(this.store(collection, next, 'MODIFIED'));
    }
    this.remove(collection, name);
    return this.ok({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name, uid: current.metadata.uid },
    });
  }

  private patch(collection: string, current: KubeObject, options: TransportRequest): TransportResponse {
    let next: KubeObject;
    if (options.contentType === MERGE_PATCH_CONTENT_TYPE) {
      const patch = structuredClone(options.body) as Partial<KubeObject>;
      const rv = patch.metadata?.resourceVersion;
      if (rv !== undefined && rv !== current.metadata.resourceVersion) {
        return this.status(
          409,
          'Conflict',
          'the object has been modified; please apply your changes to the latest version and try again',
        );
      }
      next = applyMergePatch(structuredClone(current), patch) as KubeObject;
    } else if (options.contentType === JSON_PATCH_CONTENT_TYPE) {
      try {
        next = applyJsonPatch(current, options.body as JsonPatchOperation[]);
      } catch (error) {
        return this.status(422, 'Invalid', (error as Error).message);
      }
    } else {
      return this.status(415, 'UnsupportedMediaType', `unsupported patch type ${options.contentType}`);
    }
    return this.ok(this.store(collection, next, 'MODIFIED'));
  }

  private isCollectionPath(path: string): boolean {
    const parts = path.split('/').filter(Boolean);
    // /api/v1/<plural> | /api/v1/namespaces/<ns>/<plural> | /apis/<g>/<v>/... same shapes one deeper
    const rest = parts[0] === 'api' ? parts.slice(2) : parts.slice(3);
    return rest.length === 1 || (rest[0] === 'namespaces' && rest.length === 3);
  }

  async stream(path: string, query: Query, signal: AbortSignal): Promise<TransportStream> {
    this.requests.push({ method: 'WATCH', path, query });
    await Promise.resolve();
    const fault = this.watchFaults.shift();
    if (fault) return { status: fault.status, body: fault.body, text: JSON.stringify(fault.body) };
    const s = new EventStream(path, query, signal);
    this.streams.push(s);
    return { status: 200, lines: s };
  }

  close(): void {
    this.closeWatches();
  }

  private ok(body: unknown, status = 200): TransportResponse {
    return { status, body, text: JSON.stringify(body) };
  }

  private status(code: number, reason: string, message: string): TransportResponse {
    const body = { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code };
    return { status: code, body, text: JSON.stringify(body) };
  }
}

function hangUntilAborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_resolve, reject) => {
    const fail = () => reject(new Error('the request was aborted'));
    if (signal?.aborted) fail();
    else signal?.addEventListener('abort', fail, { once: true });
  });
}
