import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { PARENT_PID_VARIABLE } from '../process/parent-watch.ts';

/** What a ManagedProcess runs and where its output goes. */
export interface ProcessSpec {
  command: string;
  args: string[];
  /** Appended to, stdout and stderr alike. */
  logPath: string;
  /** Default: this process's environment. */
  env?: NodeJS.ProcessEnv;
}

/** A child process whose output goes to a log file and which always gets stopped. */
export class ManagedProcess {
  readonly name: string;
  readonly logPath: string;
  private readonly child: ChildProcess;
  private readonly log: WriteStream;
  private exited = false;
  readonly exit: Promise<number | null>;

  constructor(name: string, spec: ProcessSpec) {
    const { command, args, logPath, env = process.env } = spec;
    this.name = name;
    this.logPath = logPath;
    this.log = createWriteStream(logPath, { flags: 'a' });
    // Our own CLI exits when this process is gone (process/parent-watch.ts); other programs ignore it.
    const childEnv = { ...env, [PARENT_PID_VARIABLE]: String(process.pid) };
    this.child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv });
    this.child.stdout?.pipe(this.log, { end: false });
    this.child.stderr?.pipe(this.log, { end: false });
    this.exit = new Promise((resolve) => {
      this.child.on('exit', (code) => {
        this.exited = true;
        resolve(code);
      });
      this.child.on('error', (error) => {
        this.log.write(`spawn error: ${error.message}\n`);
        this.exited = true;
        resolve(null);
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.exited;
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.exited) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
      await this.exit;
      clearTimeout(timer);
    }
    if (!this.log.closed) {
      this.log.end();
      await once(this.log, 'close');
    }
  }

  /** The last lines of the process log, for error messages. */
  async tail(lines = 15): Promise<string> {
    const text = await readFile(this.logPath, 'utf8').catch(() => '');
    return text.trim().split('\n').slice(-lines).join('\n');
  }

  /** Sends `sig` (SIGKILL, SIGSTOP, SIGCONT...) while the process runs; false once it has exited. */
  signal(sig: NodeJS.Signals): boolean {
    return !this.exited && this.child.kill(sig);
  }

  /** For process 'exit' handlers, where nothing asynchronous runs. */
  killNow(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }
}

/** Runs `start`; when it fails, `stop` undoes what it started before the error goes on (nothing is left running). */
export async function startOrUndo(start: () => Promise<void>, stop: () => Promise<void>): Promise<void> {
  try {
    await start();
  } catch (error) {
    await stop();
    throw error;
  }
}
