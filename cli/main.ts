#!/usr/bin/env node
import { once } from 'node:events';
import { readFileSync, realpathSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { watchParent } from '../process/parent-watch.ts';
import { buildCommit } from './build-commit.ts';
import { enableCompileCache } from './compile-cache.ts';
import { packageRoot } from './package-root.ts';
import { tuneForShortRun } from './short-run.ts';
import { type Command, type CommandIO, UsageError } from './usage.ts';

/** A command's module: its run, its usage line (printed with a usage error) and its flags for `--help`. */
export interface LoadedCommand {
  run: Command;
  usage: string;
  help: string;
}

/**
 * Each command's module loads only when that command runs: a certs Job does not pay for the controller.
 * `shortRun`: a command whose start is most of its cost (short-run.ts).
 */
export type CommandTable = Record<string, { summary: string; load: () => Promise<LoadedCommand>; shortRun?: boolean }>;

export const COMMANDS: CommandTable = {
  cel: { summary: 'evaluate a CEL expression as the API server does', load: () => import('./cel-command.ts') },
  certs: { summary: 'issue, store, inject and rotate the webhook TLS', load: () => import('./certs-command.ts') },
  compare: {
    summary: 'schema-only vs webhook validation, four ways, on a real control plane',
    load: () => import('./compare-command.ts'),
  },
  controller: { summary: 'run the StaticSite controller', load: () => import('./controller-command.ts') },
  crd: { summary: 'print the StaticSite CRD as YAML', load: () => import('./crd-command.ts') },
  generate: {
    summary: 'write the generated CRDs, admission policies and controller RBAC into manifests/',
    load: () => import('./generate-command.ts'),
  },
  local: { summary: 'run the whole system on this machine', load: () => import('./local-command.ts') },
  'migrate-storage': {
    summary: 'write every StaticSite back at the storage version, then trim storedVersions',
    load: () => import('./migrate-storage-command.ts'),
  },
  validate: {
    summary: 'admit objects as the API server would (prune, default, validate)',
    load: () => import('./validate-command.ts'),
    shortRun: true,
  },
  webhook: {
    summary: 'serve the admission and conversion webhook over HTTPS',
    load: () => import('./webhook-command.ts'),
  },
};

/** The command list; each command prints its own flags on a usage error. */
export function usage(commands: CommandTable = COMMANDS): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(16)} ${c.summary}`);
  return `usage: staticsite <command> [flags]\n       staticsite --version\n\ncommands:\n${lines.join('\n')}\n\nstaticsite <command> --help lists its flags.\n`;
}

/** This package's version, from its package.json (the same file in a checkout, the build and the image). */
export function version(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** Runs one CLI invocation and returns its exit code: 0 ok, 1 failure, 2 usage or input error. */
export async function run(argv: string[], io: CommandIO, commands: CommandTable = COMMANDS): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    io.stdout(usage(commands));
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === 'version') {
    // The commit the build recorded (devenv/build/bundle-cli.ts); `unknown` when run from source.
    io.stdout(`staticsite ${version()} (commit ${buildCommit(import.meta.url)})\n`);
    return 0;
  }
  const entry = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!entry) {
    io.stderr(`staticsite: unknown command "${name}"\n${usage(commands)}`);
    return 2;
  }
  const command = await entry.load();
  if (asksForHelp(rest)) {
    io.stdout(`usage: ${command.usage}\n\n${entry.summary}.\n\nflags:\n${command.help}\n`);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    const message = describeError(error);
    const code = (error as { code?: unknown } | null)?.code;
    const isUsage = error instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'));
    io.stderr(`staticsite ${name}: ${message}\n`);
    if (isUsage) io.stderr(`usage: ${command.usage}\n`);
    return isUsage ? 2 : 1;
  }
}

/** `--help` or `-h` among a command's flags (before a `--` that ends them). */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  const flags = end < 0 ? args : args.slice(0, end);
  return flags.includes('--help') || flags.includes('-h');
}

/** Any thrown value as one message: Errors by their message, anything else as JSON or text. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  return entry !== undefined && realpathSync(entry) === fileURLToPath(import.meta.url);
}

if (isEntryPoint()) {
  // A repeated run, as in a pre-commit hook, skips most of the module compilation.
  const name = process.argv[2] ?? '';
  if (Object.hasOwn(COMMANDS, name) && COMMANDS[name]?.shortRun) tuneForShortRun(setFlagsFromString);
  enableCompileCache(module.enableCompileCache);
  watchParent(
    process.env,
    () => process.ppid,
    () => process.kill(process.pid, 'SIGTERM'),
  );
  // A reader that stops early (`| head`) closes the pipe: the rest of the output goes nowhere, and
  // the command still finishes and exits with its own status.
  let stdoutClosed = false;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    stdoutClosed = true;
  });
  const io: CommandIO = {
    stdout: (text) => {
      if (!stdoutClosed) process.stdout.write(text);
    },
    stderr: (text) => process.stderr.write(text),
    stdoutDrained: async () => {
      if (stdoutClosed || !process.stdout.writableNeedDrain) return;
      await once(process.stdout, 'drain').catch(() => undefined);
    },
  };
  process.exitCode = await run(process.argv.slice(2), io);
}
