import { closeSync, createReadStream, fstatSync, openSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { YAMLException } from 'js-yaml';
import type { TextDecoding } from '../../crd/index.ts';
import type { CommandIO } from '../usage.ts';
import { blockTabRefusal } from './block-tabs.ts';
import { loadAllAsGoYaml } from './flow-indentation.ts';
import { readJsonDocument, textDecodingOf } from './json-document.ts';
import { duplicateFieldsOf, recordPairs } from './yaml-mappings.ts';
import { KUBECTL_YAML_SCHEMA, KUBECTL_YAML_SCHEMA_RECORDING, UnsupportedValueError } from './yaml-scalars.ts';

export interface ValidateIO extends CommandIO {
  /** Reads all of standard input (for FILE `-`); defaults to process.stdin. */
  readStdin?: () => Promise<string>;
}

/** An input the command cannot use at all: exit 2 with one line naming the file. */
export class InputError extends Error {
  override name = 'InputError';
}

/** A file (or standard input) that cannot be read: an error among the results, not the end of the run. */
export class UnreadableInput extends InputError {
  override name = 'UnreadableInput';
}

/** Deeper nesting than this is refused: no Kubernetes object comes near it. */
const MAX_DEPTH = 100;

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
    throw unreadable(path, error);
  }
}

/** The bytes of a file, read at once (CRD files: their cache key is the bytes' hash; the text is decoded only on a miss). */
export async function readBytes(path: string, io: ValidateIO): Promise<Buffer> {
  if (path === '-') return Buffer.from(await (io.readStdin ?? readStdin)(), 'utf8');
  try {
    return readFileSync(path);
  } catch (error) {
    throw unreadable(path, error);
  }
}

function unreadable(path: string, error: unknown): InputError {
  const code = (error as NodeJS.ErrnoException).code;
  return new InputError(`${path}: cannot read file${code ? ` (${code})` : ''}`);
}

/**
 * One document of an input: its 1-based index in the file, and its object (with what the API
 * server's JSON decoder meets in its text, for a JSON document) or why it has none.
 */
export type ParsedDocument =
  | { index: number; object: unknown; textDecoding?: TextDecoding }
  | { index: number; error: string };

/** A document that is one JSON object, after an optional `---` line: read as JSON (json-document.ts). */
const JSON_OBJECT_DOCUMENT = /^\s*(?:---[ \t]*\r?\n\s*)?\{/;

/** A line that starts a document (`---` alone or before content): YAML never reads it as content. */
const DOCUMENT_START = /^---(?=[ \t\r\n]|$)/gm;

/**
 * go-yaml v2 refuses documents whose aliases expand to too much (CVE-2019-11253); its rule, counted
 * over the expanded tree, with its message.
 */
function excessiveAliasing(value: unknown): boolean {
  const seen = new Set<object>();
  let decoded = 0;
  let aliased = 0;
  const allowedRatio = (count: number) =>
    count <= 400_000 ? 0.99 : count >= 4_000_000 ? 0.1 : 0.99 - (0.89 * (count - 400_000)) / 3_600_000;
  const walk = (node: unknown, inAlias: boolean): boolean => {
    decoded++;
    if (inAlias) aliased++;
    if (aliased > 100 && decoded > 1000 && aliased / decoded > allowedRatio(decoded)) return true;
    if (node === null || typeof node !== 'object') return false;
    const alias = inAlias || seen.has(node);
    seen.add(node);
    for (const child of Array.isArray(node) ? node : Object.values(node)) if (walk(child, alias)) return true;
    return false;
  };
  return walk(value, false);
}

/** A `\uD800`-`\uDFFF` escape (also `\U0000D800`), which go-yaml v2 refuses in a double-quoted scalar. */
const SURROGATE_ESCAPE = /\\(?:u|U0000)[dD][89a-fA-F][0-9a-fA-F]{2}/;
const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Whether a string or key of a decoded value holds a UTF-16 surrogate (an astral character or a lone
 * one). Each object once: aliases share subtrees, and an expanded alias bomb is refused later.
 */
function holdsSurrogate(value: unknown, seen = new Set<object>()): boolean {
  if (typeof value === 'string') return SURROGATE.test(value);
  if (value === null || typeof value !== 'object' || seen.has(value)) return false;
  seen.add(value);
  if (Array.isArray(value)) return value.some((v) => holdsSurrogate(v, seen));
  return Object.entries(value).some(([k, v]) => SURROGATE.test(k) || holdsSurrogate(v, seen));
}

interface YamlRead {
  values: unknown[];
  /** The text as read: lines js-yaml refused for their indentation, widened (flow-indentation.ts). */
  text: string;
}

/**
 * A part's documents as go-yaml v2 reads them. A repeated key is read again keeping the last of each,
 * as kubectl does, with every pair recorded so that the repeated keys can be named (yaml-mappings.ts).
 */
function readYaml(part: string): { read: YamlRead; pairs?: ReturnType<typeof recordPairs>['pairs'] } {
  try {
    return { read: loadAllAsGoYaml(part, { schema: KUBECTL_YAML_SCHEMA, maxDepth: MAX_DEPTH }) };
  } catch (error) {
    if (!(error instanceof YAMLException && error.reason === 'duplicated mapping key')) throw error;
    const { result, pairs } = recordPairs(() =>
      loadAllAsGoYaml(part, { schema: KUBECTL_YAML_SCHEMA_RECORDING, maxDepth: MAX_DEPTH, json: true }),
    );
    return { read: result, pairs };
  }
}

function lineCount(text: string): number {
  let lines = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++;
  return lines;
}

/**
 * Cuts a text read in chunks at the lines that start a document, each part read with kubectl's scalar
 * resolution (yaml-scalars.ts), so memory follows the largest document rather than the file, and a
 * document that does not parse is reported (line and column in the file) without hiding the documents
 * after it. Empty documents keep their index but yield nothing.
 */
class DocumentCutter {
  private pending = '';
  private line = 0;
  private index = 0;

  /** The documents a new chunk completes. */
  *push(chunk: string): Generator<ParsedDocument> {
    this.pending += chunk;
    // Cut before each document start whose line is complete; keep the rest for the next chunk.
    let cut = 0;
    for (const match of this.pending.matchAll(DOCUMENT_START)) {
      if (match.index === 0 || match.index + 3 >= this.pending.length) continue;
      yield* this.documents(this.pending.slice(cut, match.index));
      cut = match.index;
    }
    this.pending = this.pending.slice(cut);
  }

  /** The documents left at the end of the text. */
  end(): Generator<ParsedDocument> {
    return this.documents(this.pending);
  }

  private *documents(part: string): Generator<ParsedDocument> {
    const firstLine = this.line;
    this.line += lineCount(part);
    const json = JSON_OBJECT_DOCUMENT.test(part) ? readJsonDocument(part.replace(/^\s*---/, ''), MAX_DEPTH) : undefined;
    if (json) {
      this.index++;
      yield { index: this.index, object: json.value, textDecoding: textDecodingOf(json) };
      return;
    }
    let values: unknown[];
    let pairs: ReturnType<typeof recordPairs>['pairs'] | undefined;
    try {
      let read: YamlRead;
      ({ read, pairs } = readYaml(part));
      const tab = read.text.includes('\t') ? blockTabRefusal(read.text) : undefined;
      if (tab) {
        this.index++;
        const before = read.text.slice(0, tab.position);
        const column = tab.position - (before.lastIndexOf('\n') + 1);
        yield {
          index: this.index,
          error: `line ${firstLine + lineCount(before) + 1}, column ${column + 1}: invalid YAML: ${tab.reason}`,
        };
        return;
      }
      values = read.values;
    } catch (error) {
      this.index++;
      if (error instanceof YAMLException) {
        const at = error.mark ? `line ${firstLine + error.mark.line + 1}, column ${error.mark.column + 1}: ` : '';
        yield { index: this.index, error: `${at}invalid YAML: ${error.reason}` };
      } else if (error instanceof UnsupportedValueError) {
        yield { index: this.index, error: error.message };
      } else throw error;
      return;
    }
    // go-yaml v2 refuses a surrogate escape (kubectl: "yaml: line 7: found invalid Unicode character
    // escape code"); js-yaml decodes it. A surrogate in the result and such an escape in the text is that.
    const surrogateEscape = SURROGATE_ESCAPE.exec(part);
    if (surrogateEscape && values.some((v) => holdsSurrogate(v))) {
      this.index++;
      const at = firstLine + lineCount(part.slice(0, surrogateEscape.index)) + 1;
      yield { index: this.index, error: `line ${at}: invalid YAML: found invalid Unicode character escape code` };
      return;
    }
    for (const value of values) {
      this.index++;
      if (value === null || value === undefined) continue;
      if (part.includes('*') && excessiveAliasing(value)) {
        yield { index: this.index, error: 'invalid YAML: document contains excessive aliasing' };
        continue;
      }
      yield pairs
        ? { index: this.index, object: value, textDecoding: { duplicateFields: duplicateFieldsOf(value, pairs) } }
        : { index: this.index, object: value };
    }
  }
}

/** The documents of a text read in chunks, one at a time (DocumentCutter). */
export async function* documentsOf(chunks: AsyncIterable<string> | Iterable<string>): AsyncGenerator<ParsedDocument> {
  const cutter = new DocumentCutter();
  for await (const chunk of chunks) yield* cutter.push(chunk);
  yield* cutter.end();
}

/** The objects of a whole text; the first document that does not parse is an input error. */
export function parseDocuments(text: string, name: string): unknown[] {
  const out: unknown[] = [];
  const cutter = new DocumentCutter();
  for (const document of [...cutter.push(text), ...cutter.end()]) {
    if ('error' in document) throw new InputError(`${name}: document ${document.index}: ${document.error}`);
    out.push(document.object);
  }
  return out;
}

/**
 * Files up to this size are read in one synchronous call: most manifests are a few kilobytes, and a
 * stream per file costs more than reading it (a buffer of its own, a round trip to the thread pool).
 */
const WHOLE_FILE_BYTES = 4 << 20;

/** A file (or standard input, `-`) as text chunks, without holding a large one whole. */
export async function* chunksOf(path: string, io: ValidateIO): AsyncGenerator<string> {
  if (path === '-') {
    yield await (io.readStdin ?? readStdin)();
    return;
  }
  const whole = readSmallFile(path);
  if (whole !== undefined) {
    yield whole;
    return;
  }
  try {
    // Small chunks: each document's strings are slices of its chunk and keep it alive until they
    // are collected; with 1 MiB chunks a 39 MB file peaked at 170 MB, with 64 KiB at 103 MB.
    yield* createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 16 }) as AsyncIterable<string>;
  } catch (error) {
    throw cannotRead(error);
  }
}

/** The text of a file no larger than WHOLE_FILE_BYTES, or undefined for a larger one. */
function readSmallFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw cannotRead(error);
  }
  try {
    if (fstatSync(fd).size > WHOLE_FILE_BYTES) return undefined;
    return readFileSync(fd, 'utf8');
  } catch (error) {
    throw cannotRead(error);
  } finally {
    closeSync(fd);
  }
}

function cannotRead(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  return code === undefined ? error : new UnreadableInput(`cannot read file (${code})`);
}
