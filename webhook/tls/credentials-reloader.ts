import { type FSWatcher, watch as fsWatch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type ClientCa, readClientCa } from './client-ca.ts';
import { type CredentialsFileSystem, readServingCredentials, type ServingCredentials } from './serving-credentials.ts';

export interface ReloaderLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface CredentialsReloaderOptions {
  dir: string;
  /** Called with every new, valid pair (not with the first one passed to the constructor). */
  onReload: (credentials: ServingCredentials) => void;
  /**
   * `--client-ca`: the file re-read with the cert dir, and what it held at start. A change calls
   * onClientCaReload; a file that breaks keeps the previous CA (clientCaProblem says why).
   */
  clientCa?: { file: string; initial: ClientCa; onReload: (ca: ClientCa) => void };
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
  private readonly watchers: Array<{ close(): void }> = [];
  private timer: unknown;
  private checking: Promise<void> | undefined;
  private pending = false;
  private lastProblem: string | undefined;
  private currentClientCa: ClientCa | undefined;
  private lastClientCaProblem: string | undefined;

  constructor(initial: ServingCredentials, options: CredentialsReloaderOptions) {
    this.current = initial;
    this.options = options;
    this.currentClientCa = options.clientCa?.initial;
  }

  /** The client CA in use (`--client-ca`), or undefined without one. */
  get clientCa(): ClientCa | undefined {
    return this.currentClientCa;
  }

  /**
   * Why the client CA file could not be used at the last check, or undefined. The previous CA keeps
   * verifying callers meanwhile, but the next restart would fail: readiness reports it.
   */
  get clientCaProblem(): string | undefined {
    return this.lastClientCaProblem;
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
    // The client CA's directory too: a ConfigMap or Secret volume swaps a symlink there.
    const dirs = [this.options.dir, ...(this.options.clientCa ? [dirname(this.options.clientCa.file)] : [])];
    for (const dir of new Set(dirs)) {
      try {
        this.watchers.push(watchDir(dir, () => void this.check()));
      } catch (error) {
        this.options.logger.warn({ err: String(error), dir }, 'cannot watch a cert dir; relying on the periodic check');
      }
    }
    const every = this.options.setInterval ?? setInterval;
    const handle = every(() => void this.check(), this.options.intervalMs ?? 10_000);
    handle.unref?.();
    this.timer = handle;
  }

  stop(): void {
    for (const watcher of this.watchers.splice(0)) watcher.close();
    (this.options.clearInterval ?? ((h) => clearInterval(h as NodeJS.Timeout)))(this.timer);
  }

  /** Re-reads the dir (and the client CA file) now; concurrent calls coalesce into one extra read. */
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
    await this.readServing();
    await this.readClientCa();
  }

  private async readClientCa(): Promise<void> {
    const clientCa = this.options.clientCa;
    if (!clientCa) return;
    let next: ClientCa;
    try {
      next = await readClientCa(this.options.fs ?? { readFile }, clientCa.file);
    } catch (error) {
      this.lastClientCaProblem = (error as Error).message;
      this.options.logger.warn(
        { err: this.lastClientCaProblem },
        'client CA file not usable; still verifying callers with the previous CA',
      );
      return;
    }
    this.lastClientCaProblem = undefined;
    if (next.pem === this.currentClientCa?.pem) return;
    this.currentClientCa = next;
    this.options.logger.info({ fingerprints: next.fingerprints }, 'client CA reloaded');
    clientCa.onReload(next);
  }

  private async readServing(): Promise<void> {
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
