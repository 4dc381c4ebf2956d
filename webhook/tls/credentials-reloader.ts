import { type FSWatcher, watch as fsWatch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { type CredentialsFileSystem, readServingCredentials, type ServingCredentials } from './serving-credentials.ts';

export interface ReloaderLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface CredentialsReloaderOptions {
  dir: string;
  /** Called with every new, valid pair (not with the first one passed to the constructor). */
  onReload: (credentials: ServingCredentials) => void;
  logger: ReloaderLogger;
  /** How often to re-read even when no file event came (ConfigMap/Secret volumes swap symlinks). */
  intervalMs?: number;
  fs?: CredentialsFileSystem;
  watchDir?: (dir: string, onChange: () => void) => { close(): void };
  setInterval?: (fn: () => void, ms: number) => { unref?(): void };
  clearInterval?: (handle: unknown) => void;
}

function watchDirectory(dir: string, onChange: () => void): FSWatcher {
  const watcher = fsWatch(dir, { persistent: false }, onChange);
  watcher.on('error', () => {}); // the periodic check covers a watcher that breaks
  return watcher;
}

/**
 * Keeps the served certificate current: re-reads the cert dir on file events and on a timer, and
 * hands over a new pair only when it is complete and consistent. A half-written pair (new cert,
 * old key) is skipped and the old one keeps serving, so no handshake fails during a rotation.
 */
export class CredentialsReloader {
  private current: ServingCredentials;
  private readonly options: CredentialsReloaderOptions;
  private watcher: { close(): void } | undefined;
  private timer: unknown;
  private checking: Promise<void> | undefined;
  private pending = false;
  private lastProblem: string | undefined;

  constructor(initial: ServingCredentials, options: CredentialsReloaderOptions) {
    this.current = initial;
    this.options = options;
  }

  get credentials(): ServingCredentials {
    return this.current;
  }

  /**
   * Why the cert dir could not be read at the last check (files deleted, unreadable, a key of
   * another cert), or undefined when it holds a usable pair. The old pair keeps serving meanwhile,
   * but the next restart would fail: readiness reports it.
   */
  get problem(): string | undefined {
    return this.lastProblem;
  }

  start(): void {
    const watchDir = this.options.watchDir ?? watchDirectory;
    try {
      this.watcher = watchDir(this.options.dir, () => void this.check());
    } catch (error) {
      this.options.logger.warn({ err: String(error) }, 'cannot watch the cert dir; relying on the periodic check');
    }
    const every = this.options.setInterval ?? setInterval;
    const handle = every(() => void this.check(), this.options.intervalMs ?? 10_000);
    handle.unref?.();
    this.timer = handle;
  }

  stop(): void {
    this.watcher?.close();
    (this.options.clearInterval ?? ((h) => clearInterval(h as NodeJS.Timeout)))(this.timer);
  }

  /** Re-reads the dir now; concurrent calls coalesce into one extra read. */
  check(): Promise<void> {
    if (this.checking) {
      this.pending = true;
      return this.checking;
    }
    this.checking = this.readOnce().finally(() => {
      this.checking = undefined;
      if (this.pending) {
        this.pending = false;
        void this.check();
      }
    });
    return this.checking;
  }

  private async readOnce(): Promise<void> {
    let next: ServingCredentials;
    try {
      next = await readServingCredentials(this.options.fs ?? { readFile }, this.options.dir);
    } catch (error) {
      this.lastProblem = (error as Error).message;
      this.options.logger.warn(
        { err: this.lastProblem },
        'cert dir not usable; still serving the previous certificate',
      );
      return;
    }
    this.lastProblem = undefined;
    if (next.fingerprint === this.current.fingerprint && next.keyPem === this.current.keyPem) return;
    this.current = next;
    this.options.logger.info(
      { fingerprint: next.fingerprint, notAfter: next.notAfter.toISOString() },
      'serving certificate reloaded',
    );
    this.options.onReload(next);
  }
}
