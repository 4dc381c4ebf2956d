/**
 * V8's precise coverage of a running Node process and of its worker threads, over the process's
 * inspector (`node --inspect=127.0.0.1:0`): the signal that guides the fuzzer. Each `take()` returns
 * the code blocks that ran since the last one (V8 resets the counters it reports).
 */

interface CdpMessage {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
}

interface CoverageRange {
  startOffset: number;
  endOffset: number;
  count: number;
}

interface ScriptCoverage {
  scriptId: string;
  url: string;
  functions: Array<{ functionName: string; ranges: CoverageRange[] }>;
}

/** One session: the process's own, or a worker's reached through NodeWorker.sendMessageToWorker. */
interface Target {
  send(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** A request whose answer nobody waits for (id 0 is never one of ours). */
const NUDGE = JSON.stringify({ id: 0, method: 'Runtime.getIsolateId' });

/** AFL's hit-count buckets: a block that ran 1, 2, 3, 4-7, 8-15, 16-31, 32-127 or 128+ times. */
function bucket(count: number): number {
  if (count <= 3) return count;
  if (count < 8) return 4;
  if (count < 16) return 5;
  if (count < 32) return 6;
  if (count < 128) return 7;
  return 8;
}

export class CoverageClient {
  private readonly socket: WebSocket;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve(result: Record<string, unknown>): void; reject(e: Error): void }
  >();
  private readonly workers = new Map<string, Target>();
  private readonly workerPending = new Map<string, Map<number, (message: CdpMessage) => void>>();
  private readonly own: Target;
  /** Only scripts whose URL passes this count (the project's code, not Node's). */
  private readonly include: (url: string) => boolean;

  private constructor(socket: WebSocket, include: (url: string) => boolean) {
    this.socket = socket;
    this.include = include;
    this.own = { send: (method, params) => this.call(method, params) };
    socket.addEventListener('message', (event) => this.received(JSON.parse(String(event.data)) as CdpMessage));
  }

  /** Connects to the inspector at `url` (the ws:// address the process printed) and starts coverage. */
  static async connect(url: string, include: (scriptUrl: string) => boolean): Promise<CoverageClient> {
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error(`cannot reach the inspector at ${url}`)), { once: true });
    });
    const client = new CoverageClient(socket, include);
    await client.startCoverage(client.own);
    await client.call('NodeWorker.enable', { waitForDebuggerOnStart: false });
    return client;
  }

  /** Connects to the process whose inspector listens on 127.0.0.1:`port`. */
  static async attach(port: number, include: (scriptUrl: string) => boolean): Promise<CoverageClient> {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
      webSocketDebuggerUrl?: string;
    }>;
    const url = targets[0]?.webSocketDebuggerUrl;
    if (url === undefined) throw new Error(`no inspector target on port ${port}`);
    return CoverageClient.connect(url, include);
  }

  private async startCoverage(target: Target): Promise<void> {
    await target.send('Profiler.enable');
    await target.send('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
  }

  private call(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    this.socket.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  private received(message: CdpMessage): void {
    if (message.id === 0) return;
    if (message.id !== undefined) {
      const waiting = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) waiting?.reject(new Error(message.error.message));
      else waiting?.resolve(message.result ?? {});
      return;
    }
    const params = message.params ?? {};
    if (message.method === 'NodeWorker.attachedToWorker') this.attached(String(params.sessionId));
    if (message.method === 'NodeWorker.detachedFromWorker') {
      // A worker replaced mid-request answers nothing more: what waits on it ends now.
      const sessionId = String(params.sessionId);
      for (const waiting of this.workerPending.get(sessionId)?.values() ?? []) {
        waiting({ error: { message: 'the worker is gone' } });
      }
      this.workers.delete(sessionId);
      this.workerPending.delete(sessionId);
    }
    if (message.method === 'NodeWorker.receivedMessageFromWorker') {
      const inner = JSON.parse(String(params.message)) as CdpMessage;
      if (inner.id === undefined) return;
      const waiting = this.workerPending.get(String(params.sessionId));
      waiting?.get(inner.id)?.(inner);
      waiting?.delete(inner.id);
    }
  }

  private attached(sessionId: string): void {
    let next = 1;
    const waiting = new Map<number, (message: CdpMessage) => void>();
    this.workerPending.set(sessionId, waiting);
    const target: Target = {
      send: (method, params = {}) => {
        const id = next++;
        const message = JSON.stringify({ id, method, params });
        return new Promise((resolve, reject) => {
          // The inspector writes a worker's answer as a second small segment after the first is
          // acknowledged, and the client's acknowledgement waits 40 ms for data to ride on:
          // a no-op on the process's own session every millisecond carries it (40 ms become 2).
          const nudge = setInterval(() => this.socket.send(NUDGE), 1);
          waiting.set(id, (answer) => {
            clearInterval(nudge);
            if (answer.error) reject(new Error(answer.error.message));
            else resolve(answer.result ?? {});
          });
          this.call('NodeWorker.sendMessageToWorker', { sessionId, message }).catch((error) => {
            clearInterval(nudge);
            reject(error);
          });
        });
      },
    };
    // A worker that is gone before coverage starts is simply not counted.
    this.startCoverage(target).then(
      () => this.workers.set(sessionId, target),
      () => {},
    );
  }

  /** How many worker sessions report coverage now. */
  get workerCount(): number {
    return this.workers.size;
  }

  /**
   * The features of what ran since the last call, in the process and every worker: each block of
   * the included scripts that ran, with its hit-count bucket, keyed by script URL and offsets
   * (stable across workers and their replacements, unlike script ids).
   *
   * V8 reports a block only where its count differs from the block around it, so a block that once
   * ran 0 times and now runs as often as its function is not in the report: every block ever
   * reported is remembered, and its count is that of the innermost reported range holding it.
   */
  async take(): Promise<Set<string>> {
    const features = new Set<string>();
    const targets = [this.own, ...this.workers.values()];
    const results = await Promise.allSettled(targets.map((t) => t.send('Profiler.takePreciseCoverage')));
    for (const result of results) {
      if (result.status !== 'fulfilled') continue;
      for (const script of (result.value.result ?? []) as ScriptCoverage[]) {
        if (!this.include(script.url)) continue;
        for (const fn of script.functions) this.featuresOf(script.url, fn.ranges, features);
      }
    }
    return features;
  }

  /** Blocks inside each function ever reported, by `url:start:end` of the function. */
  private readonly blocks = new Map<string, Map<string, [number, number]>>();

  private featuresOf(url: string, ranges: CoverageRange[], features: Set<string>): void {
    const [whole, ...inner] = ranges;
    if (whole === undefined) return;
    const key = `${url}:${whole.startOffset}:${whole.endOffset}`;
    let known = this.blocks.get(key);
    if (known === undefined) {
      known = new Map();
      this.blocks.set(key, known);
    }
    for (const r of inner) known.set(`${r.startOffset}:${r.endOffset}`, [r.startOffset, r.endOffset]);
    if (whole.count === 0) return;
    features.add(`${key}:${bucket(whole.count)}`);
    for (const [name, [start, end]] of known) {
      // Nested ranges follow the ranges that hold them: the last one holding the block is innermost.
      let count = whole.count;
      for (const r of inner) if (r.startOffset <= start && end <= r.endOffset) count = r.count;
      if (count > 0) features.add(`${url}:${name}:${bucket(count)}`);
    }
  }

  close(): void {
    this.socket.close();
  }
}
