import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uninstrumentedEnv } from '../../devenv/uninstrumented-env.ts';
import { commandLineOf, environOf, parentOf } from './process-table.ts';

/**
 * The environment variable that marks every process a test run starts: set in the runner before any
 * suite spawns anything, inherited by every child (Go binaries, BIND, containerd and its shims, the
 * built CLI) and by their children. Its value is the run's id (runs inside runs: their ids, by commas).
 */
export const RUN_MARKER = 'STATICSITE_TEST_RUN';
/** Where the run's reaper keeps its log and the suites' cleanups. */
export const RUN_DIR = 'STATICSITE_TEST_RUN_DIR';

/**
 * The processes whose end ends the run: the runner (mocha), the npm script processes above it (c8,
 * the script's shell) and the `npm` that ran the script, where there is one. An IDE running mocha
 * alone gives just the runner.
 */
export function runChain(pid = process.pid): number[] {
  const chain = [pid];
  for (let parent = parentOf(pid); parent > 1; parent = parentOf(parent)) {
    if (environOf(parent).some((entry) => entry.startsWith('npm_lifecycle_event='))) {
      chain.push(parent);
      continue;
    }
    const argv = commandLineOf(parent);
    if (/^npm( |$)/.test(argv[0] ?? '') || argv.some((arg) => arg.endsWith('/npm-cli.js'))) chain.push(parent);
    break;
  }
  return chain;
}

/**
 * Makes this test run's processes end with it, however it ends: marks this process's environment
 * (so every process started from now on carries the marker) and starts the reaper, detached, which
 * ends them when the run is over (test/support/reaper.ts). Once per runner process.
 */
export function guardTestRun(): void {
  const id = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'staticsite-test-run-'));
  const reaper = spawn(
    process.execPath,
    [new URL('./reaper.ts', import.meta.url).pathname, RUN_MARKER, id, dir, ...runChain().map(String)],
    // Its own session: a Ctrl-C to the terminal's process group does not reach it. Its stdin is a pipe
    // from this process: when this process is gone, however, the pipe closes.
    // No coverage of its own: it outlives the runner, and c8 reads the coverage folder as soon as the
    // runner has exited.
    { detached: true, stdio: ['pipe', 'ignore', 'ignore'], env: uninstrumentedEnv(process.env) },
  );
  reaper.unref();
  (reaper.stdin as unknown as { unref?: () => void }).unref?.();
  // A runner inside another run (a test of this mechanism) keeps the outer run's id beside its own:
  // either run's end ends its processes.
  process.env[RUN_MARKER] = [process.env[RUN_MARKER], id].filter(Boolean).join(',');
  process.env[RUN_DIR] = dir;
}

/**
 * A command the reaper runs after the run, however it ended: for what outlives the run's processes
 * (containers are dockerd's, not the run's). It runs after a normal end too, so it must be harmless
 * when there is nothing left to clean.
 */
export function registerCleanup(command: readonly string[]): void {
  const dir = process.env[RUN_DIR];
  if (dir) appendFileSync(join(dir, 'cleanups.jsonl'), `${JSON.stringify(command)}\n`);
}

/** The registered cleanups, each once, in the order they were registered. */
export function readCleanups(dir: string): string[][] {
  let text = '';
  try {
    text = readFileSync(join(dir, 'cleanups.jsonl'), 'utf8');
  } catch {
    return [];
  }
  const unique = new Set(text.split('\n').filter(Boolean));
  return [...unique].map((line) => JSON.parse(line) as string[]);
}

/** Runs one cleanup to its end (or `timeoutMs`); resolves with how it ended, never rejects. */
export function runCleanup(command: readonly string[], timeoutMs: number): Promise<string> {
  const [file, ...args] = command;
  if (!file) return Promise.resolve('empty command');
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve(error.message);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve(signal ? `killed (${signal})` : `exit ${code}`);
    });
  });
}
