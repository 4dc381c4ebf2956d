import { type ResourceLimits, Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { type Decided, type ReviewEnvelope, type ReviewTask, stoppedDecision } from '../review/codec.ts';
import type { ReviewIsolation } from '../review/pipeline.ts';
import type { FromWorker, ReviewWorkerData, ToWorker } from './protocol.ts';

/** How the pool isolates reviews; the shipped values are REVIEW_ISOLATION in webhook/server-settings.ts. */
export interface ReviewPoolSettings {
  /** Worker threads answering reviews, one review each at a time. */
  workers: number;
  /** A review running longer is stopped: its worker is replaced and the review denied. */
  deadlineMs: number;
  /** A review waiting longer for a free worker is answered 503 (the API server's call fails fast). */
  queueTimeoutMs: number;
  /**
   * A worker without a review for this long stops, giving its memory back; the next review beyond
   * the in-thread bounds starts one again (it waits for it, within queueTimeoutMs). 0: never.
   */
  idleMs: number;
  /**
   * Workers started with the pool (default: all), proving that the worker loads; the others start
   * when reviews wait for them.
   */
  initialWorkers?: number;
  /**
   * Whether the workers started with the pool stop as soon as they have proved that the worker
   * loads, rather than idling for idleMs: a process that sees only reviews within the in-thread
   * bounds then holds no worker's memory from its start.
   */
  retireInitialWorkers?: boolean;
  /** Each worker's heap: a review that needs more is denied and its worker replaced. */
  resourceLimits: Required<Pick<ResourceLimits, 'maxOldGenerationSizeMb' | 'maxYoungGenerationSizeMb'>> &
    Pick<ResourceLimits, 'stackSizeMb'>;
}

export type ReplacedReason = 'deadline' | 'memory' | 'exit';

export interface ReviewPoolOptions extends ReviewPoolSettings {
  workerData: ReviewWorkerData;
  logger: Logger;
  /** Told whenever a worker is replaced, and of the queue's length as it changes. */
  observer?: { replaced(reason: ReplacedReason): void; queueLength(length: number): void };
  /** The worker's entry; review-worker.ts (or .js once built) beside this file. */
  script?: URL;
}

interface Job {
  id: number;
  task: ReviewTask;
  resolve: (answer: Decided) => void;
  envelope?: ReviewEnvelope;
  timer?: NodeJS.Timeout;
}

interface Slot {
  worker?: Worker;
  /** `retired`: stopped after idleMs without a review; started again on demand. */
  state: 'starting' | 'idle' | 'busy' | 'stopping' | 'retired';
  job?: Job;
  error?: Error;
  idleTimer?: NodeJS.Timeout;
}

const FIRST_RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 5_000;

/**
 * The body's memory, to transfer: the buffer itself when the body is all of it (the review endpoint
 * reads every body into a buffer of its own), else a copy (a view into memory shared with others).
 */
function ownBuffer(body: Uint8Array): ArrayBuffer {
  const { buffer } = body;
  if (buffer instanceof ArrayBuffer && body.byteOffset === 0 && body.byteLength === buffer.byteLength) return buffer;
  return new Uint8Array(body).buffer;
}

function defaultScript(): URL {
  // Beside this module: review-worker.ts from source, review-worker.js once built or bundled.
  const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`./review-worker${extension}`, import.meta.url);
}

/**
 * Review workers: each review body beyond the in-thread bounds goes to a worker thread with a heap
 * of its own and a deadline, so a review built to exhaust memory or time costs one worker (replaced
 * at once) and that review (denied, saying why), never the process or the other reviews. All of
 * them start with the pool (a worker that cannot start fails the start); one idle for idleMs stops
 * and is started again when a review needs it, so a webhook that sees only ordinary reviews holds
 * no worker's memory.
 */
export class ReviewPool implements ReviewIsolation {
  private readonly options: ReviewPoolOptions;
  private readonly script: URL;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  private restartDelayMs = FIRST_RESTART_DELAY_MS;
  private started?: { resolve: () => void; reject: (error: Error) => void };
  private heapChecked = false;

  constructor(options: ReviewPoolOptions) {
    this.options = options;
    this.script = options.script ?? defaultScript();
  }

  /** Starts the initial workers; resolves once all of them take reviews, rejects if one cannot start. */
  start(): Promise<void> {
    const ready = new Promise<void>((resolve, reject) => {
      this.started = { resolve, reject };
    });
    const { workers, initialWorkers = workers } = this.options;
    for (let i = 0; i < workers; i++)
      this.slots.push(i < Math.max(1, initialWorkers) ? this.spawn() : { state: 'retired' });
    return ready;
  }

  /** Workers that take reviews now. */
  get readyWorkers(): number {
    return this.slots.filter((slot) => slot.state === 'idle' || slot.state === 'busy').length;
  }

  /**
   * Whether a review sent now gets a worker: one is running, or the stopped ones retired while idle
   * (and start on demand). False while the pool starts and while replacements after failures start.
   */
  get available(): boolean {
    if (this.readyWorkers > 0) return true;
    return this.started === undefined && this.slots.length > 0 && this.slots.every((slot) => slot.state === 'retired');
  }

  evaluate(task: ReviewTask): Promise<Decided> {
    if (this.closed) return Promise.resolve({ kind: 'failed', code: 503, message: 'the webhook is shutting down' });
    return new Promise((resolve) => {
      const job: Job = { id: this.nextId++, task, resolve };
      job.timer = setTimeout(() => this.expireQueued(job), this.options.queueTimeoutMs);
      this.queue.push(job);
      this.dispatch();
      this.options.observer?.queueLength(this.queue.length);
    });
  }

  /** Stops every worker; reviews not answered yet get a 503. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0))
      this.finish(job, { kind: 'failed', code: 503, message: 'the webhook is shutting down' });
    const exits = this.slots.map((slot) => {
      if (slot.job) this.finish(slot.job, stoppedDecision(slot.job.envelope, 503, 'the webhook is shutting down'));
      clearTimeout(slot.idleTimer);
      slot.state = 'stopping';
      return slot.worker?.terminate();
    });
    await Promise.all(exits);
  }

  private spawn(): Slot {
    const { workerData, resourceLimits } = this.options;
    const worker = new Worker(this.script, { workerData, resourceLimits, stdout: false, stderr: false });
    const slot: Slot = { worker, state: 'starting' };
    worker.on('message', (message: FromWorker) => this.received(slot, message));
    worker.on('error', (error) => {
      slot.error = error;
    });
    worker.on('exit', (code) => this.exited(slot, code));
    return slot;
  }

  private received(slot: Slot, message: FromWorker): void {
    if (slot.state === 'stopping') return;
    if (message.type === 'ready') {
      this.checkHeapLimit(message.heapLimitMb);
      this.becameIdle(slot);
      this.restartDelayMs = FIRST_RESTART_DELAY_MS;
      if (this.started && this.slots.every((s) => s.state !== 'starting')) {
        this.started.resolve();
        this.started = undefined;
        if (this.options.retireInitialWorkers) for (const idle of this.slots) this.retire(idle);
      }
      this.dispatch();
      return;
    }
    const job = slot.job;
    if (job === undefined || job.id !== message.id) return;
    if (message.type === 'parsed') {
      job.envelope = message.envelope;
      return;
    }
    slot.job = undefined;
    this.becameIdle(slot);
    this.finish(job, message.decided);
    this.dispatch();
  }

  /** Idle: it retires after idleMs unless a review comes first. */
  private becameIdle(slot: Slot): void {
    slot.state = 'idle';
    const { idleMs } = this.options;
    if (idleMs <= 0) return;
    clearTimeout(slot.idleTimer);
    slot.idleTimer = setTimeout(() => this.retire(slot), idleMs);
    slot.idleTimer.unref();
  }

  private retire(slot: Slot): void {
    if (slot.state !== 'idle' || this.closed) return;
    const worker = slot.worker;
    slot.state = 'retired';
    slot.worker = undefined;
    void worker?.terminate();
  }

  /**
   * A --max-old-space-size (in NODE_OPTIONS, say) overrides every worker's resourceLimits: the
   * workers then may grow to the process's limit, and one review can take what two were given.
   */
  private checkHeapLimit(heapLimitMb: number): void {
    if (this.heapChecked) return;
    this.heapChecked = true;
    const { maxOldGenerationSizeMb, maxYoungGenerationSizeMb } = this.options.resourceLimits;
    const expectedMb = maxOldGenerationSizeMb + 2 * maxYoungGenerationSizeMb;
    if (heapLimitMb <= expectedMb) return;
    this.options.logger.warn(
      { heapLimitMb: Math.round(heapLimitMb), reviewHeapMb: maxOldGenerationSizeMb },
      'the review workers heap limit is overridden (a --max-old-space-size in NODE_OPTIONS or the command line?): one review may use far more memory than its limit',
    );
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.state !== 'idle' || slot.worker === undefined) continue;
      const job = this.queue.shift();
      if (job === undefined) break;
      this.options.observer?.queueLength(this.queue.length);
      clearTimeout(job.timer);
      clearTimeout(slot.idleTimer);
      job.timer = setTimeout(() => this.overran(slot, job), this.options.deadlineMs);
      slot.job = job;
      slot.state = 'busy';
      const body = ownBuffer(job.task.body);
      const message: ToWorker = { id: job.id, path: job.task.path, contentType: job.task.contentType, body };
      slot.worker.postMessage(message, [body]);
    }
    this.startRetired();
  }

  /** Retired workers started again for the reviews still waiting, one for each waiting review. */
  private startRetired(): void {
    let starting = this.slots.filter((slot) => slot.state === 'starting').length;
    for (const [at, slot] of this.slots.entries()) {
      if (starting >= this.queue.length) return;
      if (slot.state !== 'retired') continue;
      this.slots[at] = this.spawn();
      starting++;
    }
  }

  private finish(job: Job, answer: Decided): void {
    clearTimeout(job.timer);
    job.resolve(answer);
  }

  private expireQueued(job: Job): void {
    const at = this.queue.indexOf(job);
    if (at === -1) return;
    this.queue.splice(at, 1);
    this.options.observer?.queueLength(this.queue.length);
    this.finish(job, {
      kind: 'failed',
      code: 503,
      message: `the webhook's ${this.options.workers} review workers were busy for ${this.options.queueTimeoutMs} ms; retry`,
    });
  }

  private overran(slot: Slot, job: Job): void {
    if (slot.job !== job) return;
    const { deadlineMs } = this.options;
    this.options.logger.warn(
      { path: job.task.path, uid: job.envelope?.uid.slice(0, 128), deadlineMs },
      'a review overran its deadline: its worker is replaced',
    );
    this.replace(slot, 'deadline');
    this.finish(
      job,
      stoppedDecision(
        job.envelope,
        504,
        `the webhook stopped reviewing this object after ${deadlineMs} ms, its limit for one review; an object that takes longer cannot be admitted`,
      ),
    );
  }

  private exited(slot: Slot, code: number): void {
    if (slot.state === 'stopping' || slot.state === 'retired' || this.closed) return;
    const outOfMemory = (slot.error as NodeJS.ErrnoException | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
    const job = slot.job;
    const neverReady = slot.state === 'starting';
    this.options.logger.error(
      { path: job?.task.path, uid: job?.envelope?.uid.slice(0, 128), code, err: slot.error?.message.slice(0, 1024) },
      outOfMemory ? 'a review worker ran out of memory: it is replaced' : 'a review worker stopped: it is replaced',
    );
    if (neverReady && this.started && this.readyWorkers === 0) {
      // No worker ever started: the process cannot review anything, say so at start.
      const error = new Error(
        `review worker ${this.script.pathname} did not start: ${slot.error?.message ?? `exit ${code}`}`,
      );
      this.started.reject(error);
      this.started = undefined;
      return;
    }
    if (job) {
      const { maxOldGenerationSizeMb } = this.options.resourceLimits;
      this.finish(
        job,
        outOfMemory
          ? stoppedDecision(
              job.envelope,
              413,
              `the webhook ran out of memory reviewing this object (one review may use ${maxOldGenerationSizeMb} MiB); an object that needs more cannot be admitted`,
            )
          : stoppedDecision(job.envelope, 500, 'internal error: the review worker stopped; see the webhook log'),
      );
    }
    this.replace(slot, outOfMemory ? 'memory' : 'exit', neverReady ? this.nextRestartDelay() : 0);
  }

  private nextRestartDelay(): number {
    const delay = this.restartDelayMs;
    this.restartDelayMs = Math.min(delay * 2, MAX_RESTART_DELAY_MS);
    return delay;
  }

  /** A new worker in the slot's place (after `delayMs`); the old one is stopped if it still runs. */
  private replace(slot: Slot, reason: ReplacedReason, delayMs = 0): void {
    slot.state = 'stopping';
    slot.job = undefined;
    clearTimeout(slot.idleTimer);
    void slot.worker?.terminate();
    this.options.observer?.replaced(reason);
    const at = this.slots.indexOf(slot);
    const respawn = () => {
      if (this.closed || at === -1) return;
      this.slots[at] = this.spawn();
    };
    if (delayMs > 0) setTimeout(respawn, delayMs);
    else respawn();
  }
}
