import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Composer, type Document, LineCounter, Parser } from 'yaml';
import type { CommandIO } from '../usage.ts';

export interface ValidateIO extends CommandIO {
  /** Reads all of standard input (for FILE `-`); defaults to process.stdin. */
  readStdin?: () => Promise<string>;
}

/** An input the command cannot use at all: exit 2 with one line naming the file. */
export class InputError extends Error {
  override name = 'InputError';
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function readText(path: string, io: ValidateIO): Promise<string> {
  if (path === '-') return (io.readStdin ?? readStdin)();
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputError(`${path}: cannot read file${code ? ` (${code})` : ''}`);
  }
}

/**
 * The non-empty YAML (or JSON) documents of a text read in chunks, as plain values, one at a time:
 * each chunk is lexed as it arrives, each document composed, converted and dropped before the next,
 * so memory follows the largest document rather than the file. YAML 1.1 like kubectl. Syntax errors
 * and alias bombs are input errors naming the file, the document and the line.
 */
export async function* documentsOf(
  chunks: AsyncIterable<string> | Iterable<string>,
  name: string,
): AsyncGenerator<unknown> {
  const lines = new LineCounter();
  const parser = new Parser(lines.addNewLine);
  const composer = new Composer({ version: '1.1' });
  let index = 0;
  function* values(docs: Iterable<Document.Parsed>): Generator<unknown> {
    for (const doc of docs) {
      index++;
      const error = doc.errors[0];
      if (error) {
        const pos = lines.linePos(error.pos[0]);
        const reason = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
        throw new InputError(`${name}:${pos.line}:${pos.col}: document ${index}: invalid YAML: ${reason}`);
      }
      let value: unknown;
      try {
        value = doc.toJS({ maxAliasCount: 1000 });
      } catch (error) {
        // yaml refuses alias expansion past maxAliasCount ("Excessive alias count ...").
        throw new InputError(`${name}: document ${index}: ${(error as Error).message}`);
      }
      if (value !== null && value !== undefined) yield value;
    }
  }
  for await (const chunk of chunks) {
    for (const token of parser.parse(chunk, true)) yield* values(composer.next(token));
  }
  for (const token of parser.parse('', false)) yield* values(composer.next(token));
  yield* values(composer.end());
}

export async function parseDocuments(text: string, name: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const value of documentsOf([text], name)) out.push(value);
  return out;
}

/** A file (or standard input, `-`) as text chunks, without holding it whole. */
export async function* chunksOf(path: string, io: ValidateIO): AsyncGenerator<string> {
  if (path === '-') {
    yield await (io.readStdin ?? readStdin)();
    return;
  }
  try {
    yield* createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 }) as AsyncIterable<string>;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined) throw error;
    throw new InputError(`${path}: cannot read file (${code})`);
  }
}
