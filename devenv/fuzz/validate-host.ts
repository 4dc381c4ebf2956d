/**
 * The process the validate fuzzer drives: the shipped CLI bundle's `run` (what `staticsite
 * validate` runs, with the same argv) called once per input received over IPC, standard input being
 * the input's text. One long-lived process, so V8's coverage of it can guide the fuzzer at hundreds
 * of inputs a second where a process per input would manage a few.
 *
 * Message in: `{ id, args, stdin }`. Message out: `{ id, code, stdout, stderr, ms }`.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../cli/package-root.ts';

interface Input {
  id: number;
  args: string[];
  stdin: string;
}

/** The CLI's IO as `staticsite validate` reads it (cli/validate/documents.ts: ValidateIO). */
interface ValidateIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readStdin: () => Promise<string>;
}

type Run = (argv: string[], io: ValidateIO) => Promise<number>;

/** What is sent back of the output: enough to judge it, bounded so the channel stays cheap. */
const MAX_OUTPUT = 256 * 1024;

const bundle = pathToFileURL(join(packageRoot(), 'dist', 'bin', 'staticsite.js')).href;
const { run } = (await import(bundle)) as { run: Run };

process.on('message', async (message: Input) => {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const io: ValidateIO = {
    stdout: (text) => stdout.push(text),
    stderr: (text) => stderr.push(text),
    readStdin: async () => message.stdin,
  };
  const started = performance.now();
  const code = await run(['validate', ...message.args], io);
  const ms = performance.now() - started;
  process.send?.({
    id: message.id,
    code,
    stdout: stdout.join('').slice(0, MAX_OUTPUT),
    stderr: stderr.join('').slice(0, MAX_OUTPUT),
    ms,
  });
});
process.send?.({ ready: true });
