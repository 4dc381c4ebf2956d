#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { crdCommand, crdUsage } from './crd-command.ts';
import { generateCommand, generateUsage } from './generate-command.ts';
import { type Command, type CommandIO, UsageError } from './usage.ts';

const commands: Record<string, { run: Command; usage: string; summary: string }> = {
  crd: { run: crdCommand, usage: crdUsage, summary: 'print the StaticSite CRD as YAML' },
  generate: { run: generateCommand, usage: generateUsage, summary: 'write the generated CRDs into manifests/' },
};

export function usage(): string {
  const lines = Object.values(commands).map((c) => `  ${c.usage.padEnd(56)} ${c.summary}`);
  return `usage: staticsite <command> [flags]\n\ncommands:\n${lines.join('\n')}\n`;
}

/** Runs one CLI invocation and returns its exit code: 0 ok, 1 failure, 2 usage or input error. */
export async function run(argv: string[], io: CommandIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    io.stdout(usage());
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (!command) {
    io.stderr(`staticsite: unknown command "${name}"\n${usage()}`);
    return 2;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const isUsage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    io.stderr(`staticsite ${name}: ${message}\n`);
    if (isUsage) io.stderr(`usage: ${command.usage}\n`);
    return isUsage ? 2 : 1;
  }
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  return entry !== undefined && realpathSync(entry) === fileURLToPath(import.meta.url);
}

if (isEntryPoint()) {
  const io: CommandIO = {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  };
  process.exitCode = await run(process.argv.slice(2), io);
}
