import { spawn } from 'node:child_process';
import { builtCli } from '../../devenv/webhook-process.ts';

export interface CliRun {
  /** The exit code; 128 when a signal ended the process. */
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * The built CLI as a user runs it: `node [nodeArgs] dist/bin/staticsite.js args...`, with `stdin` given and
 * `env` over this process's environment.
 */
export function runBuiltCli(
  args: string[],
  options: { stdin?: string; nodeArgs?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<CliRun> {
  const started = performance.now();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), builtCli(), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  child.stdin.end(options.stdin ?? '');
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code: code ?? 128, stdout, stderr, ms: performance.now() - started })),
  );
}
