import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { RUN_MARKER, registerCleanup } from './run-guard.ts';

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end and resolves with its exit code and output; never rejects on a non-zero exit. */
export function runCommand(
  command: string,
  args: readonly string[],
  options: { timeoutMs?: number; cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

/** The label on every container a test run starts: the run's reaper removes them, however the run ends. */
const RUN_LABEL = 'dev.staticsite.test-run';

/** `docker ARGS`, to its end. A container it runs is labelled with the run and removed after it. */
export function docker(args: readonly string[], timeoutMs?: number): Promise<CommandResult> {
  const run = process.env[RUN_MARKER]?.split(',').at(-1);
  if (args[0] !== 'run' || !run) return runCommand('docker', args, { timeoutMs });
  const label = `${RUN_LABEL}=${run}`;
  registerCleanup(['sh', '-c', `docker ps -aq --filter label=${label} | xargs -r docker rm -f`]);
  return runCommand('docker', ['run', '--label', label, ...args.slice(1)], { timeoutMs });
}

/** `docker ARGS`, which must exit 0; resolves with its stdout, trimmed. */
export async function dockerOk(args: readonly string[], timeoutMs?: number): Promise<string> {
  const result = await docker(args, timeoutMs);
  if (result.code !== 0) {
    throw new Error(`docker ${args.join(' ')}: exit ${result.code}\n${result.stderr}${result.stdout}`);
  }
  return result.stdout.trim();
}

/** The image `npm run image` builds: staticsite-operator:<package.json version>. */
export function operatorImage(): string {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return `staticsite-operator:${version}`;
}

export { LOCAL_SITE_IMAGE as SITE_IMAGE } from '../../devenv/real-node.ts';

/** `bash devenv/image/build.sh` (`npm run image`); resolves with the image name it prints last. */
export async function buildImages(): Promise<string> {
  const script = new URL('../../devenv/image/build.sh', import.meta.url).pathname;
  const result = await runCommand('bash', [script], { timeoutMs: 40 * 60_000 });
  if (result.code !== 0) throw new Error(`npm run image: exit ${result.code}\n${result.stderr}`);
  return result.stdout.trim().split('\n').at(-1) ?? '';
}
