import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { Composer, type Document, LineCounter, Parser } from 'yaml';
import { buildCrd, type CustomResourceDefinition } from '../api/index.ts';
import {
  type AdmissionResult,
  admit,
  type CompiledCrdVersion,
  compileCrdVersion,
  createCelEnvironment,
  type FieldValidation,
  simpleNameGenerator,
} from '../crd/index.ts';
import { type CommandIO, UsageError } from './usage.ts';

export const validateUsage =
  'staticsite validate [--crd FILE] [--version V] [--old FILE] [--field-validation Strict|Warn|Ignore] [-o json|text] FILE|-';

export interface ValidateIO extends CommandIO {
  /** Reads all of standard input (for FILE `-`); defaults to process.stdin. */
  readStdin?: () => Promise<string>;
}

/** An input the command cannot use at all: exit 2 with one line naming the file. */
class InputError extends Error {
  override name = 'InputError';
}

const FIELD_VALIDATIONS: readonly FieldValidation[] = ['Strict', 'Warn', 'Ignore'];
/** kubectl asks for Strict, so a file that kubectl would reject is rejected here too. */
const DEFAULT_FIELD_VALIDATION: FieldValidation = 'Strict';
/** kubectl's namespace when the object names none. */
const DEFAULT_NAMESPACE = 'default';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function readText(path: string, io: ValidateIO): Promise<string> {
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
async function* documentsOf(chunks: AsyncIterable<string> | Iterable<string>, name: string): AsyncGenerator<unknown> {
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

async function parseDocuments(text: string, name: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const value of documentsOf([text], name)) out.push(value);
  return out;
}

/** A file (or standard input, `-`) as text chunks, without holding it whole. */
async function* chunksOf(path: string, io: ValidateIO): AsyncGenerator<string> {
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

async function loadCrd(path: string | undefined, io: ValidateIO): Promise<CustomResourceDefinition> {
  if (path === undefined) return buildCrd();
  const docs = await parseDocuments(await readText(path, io), path);
  const crd = docs.find(
    (d): d is CustomResourceDefinition => (d as { kind?: unknown } | null)?.kind === 'CustomResourceDefinition',
  );
  if (!crd) throw new InputError(`${path}: no CustomResourceDefinition in the file`);
  return crd;
}

/** The version an object is for: --version, else its apiVersion when the CRD serves it, else storage. */
function versionFor(crd: CustomResourceDefinition, object: unknown, requested: string | undefined): string | undefined {
  if (requested) return requested;
  const apiVersion = (object as { apiVersion?: unknown } | null)?.apiVersion;
  if (typeof apiVersion === 'string' && apiVersion.startsWith(`${crd.spec.group}/`)) {
    const v = apiVersion.slice(crd.spec.group.length + 1);
    if (crd.spec.versions.some((x) => x.name === v)) return v;
  }
  return undefined;
}

function jsonLine(result: AdmissionResult): string {
  return `${JSON.stringify({
    allowed: result.allowed,
    code: result.code,
    message: result.message,
    errors: result.code === 400 ? result.decodeErrors : result.errors.map(String),
    warnings: result.warnings,
    object: result.object ?? null,
  })}\n`;
}

function describe(object: unknown, index: number): string {
  const o = object as { kind?: unknown; metadata?: { name?: unknown } } | null;
  const name = typeof o?.metadata?.name === 'string' ? o.metadata.name : `document ${index + 1}`;
  return typeof o?.kind === 'string' ? `${o.kind}/${name}` : name;
}

function textBlock(result: AdmissionResult, label: string): string {
  const lines = result.warnings.map((w) => `Warning: ${w}`);
  lines.push(
    result.allowed ? `${label}: valid` : `${label}: ${result.code === 400 ? 'rejected' : 'invalid'}: ${result.message}`,
  );
  return `${lines.join('\n')}\n`;
}

/** `staticsite validate`: what the API server would answer for each object, without a server. */
export async function validateCommand(args: string[], io: ValidateIO): Promise<number> {
  try {
    return await validate(args, io);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    io.stderr(`staticsite validate: ${error.message}\n`);
    return 2;
  }
}

async function validate(args: string[], io: ValidateIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      crd: { type: 'string' },
      version: { type: 'string' },
      old: { type: 'string' },
      'field-validation': { type: 'string', default: DEFAULT_FIELD_VALIDATION },
      output: { type: 'string', short: 'o', default: 'text' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1) throw new UsageError('expected exactly one FILE (or - for standard input)');
  const fieldValidation = values['field-validation'] as FieldValidation;
  if (!FIELD_VALIDATIONS.includes(fieldValidation)) {
    throw new UsageError(
      `--field-validation must be one of ${FIELD_VALIDATIONS.join(', ')}, not ${JSON.stringify(fieldValidation)}`,
    );
  }
  if (values.output !== 'json' && values.output !== 'text') {
    throw new UsageError(`-o must be json or text, not ${JSON.stringify(values.output)}`);
  }
  const file = positionals[0] ?? '-';
  const crd = await loadCrd(values.crd, io);
  const name = file === '-' ? '<stdin>' : file;
  const oldObject =
    values.old === undefined ? undefined : (await parseDocuments(await readText(values.old, io), values.old))[0];

  const compiled = new Map<string, CompiledCrdVersion>();
  const environment = createCelEnvironment();
  const compiledFor = (version: string | undefined) => {
    const key = version ?? '';
    let c = compiled.get(key);
    if (!c) {
      try {
        c = compileCrdVersion(crd, version, { environment });
      } catch (error) {
        // A version the CRD lacks, or rules the API server would refuse when the CRD is written.
        throw new InputError((error as Error).message);
      }
      compiled.set(key, c);
    }
    return c;
  };

  let denied = 0;
  let index = 0;
  for await (const object of documentsOf(chunksOf(file, io), name)) {
    const version = compiledFor(versionFor(crd, object, values.version));
    const result = admit(version, object, {
      fieldValidation,
      oldObject,
      // The request's namespace: kubectl sends the object's, or on update the stored object's.
      namespace: version.target.namespaced ? namespaceOf(object, oldObject) : undefined,
      generateName: simpleNameGenerator(),
    });
    if (!result.allowed) denied++;
    io.stdout(values.output === 'json' ? jsonLine(result) : textBlock(result, describe(object, index)));
    index++;
  }
  if (index === 0) throw new InputError(`${name}: no objects to validate`);
  return denied > 0 ? 1 : 0;
}

function namespaceOf(object: unknown, oldObject: unknown): string {
  for (const o of [object, oldObject]) {
    const ns = (o as { metadata?: { namespace?: unknown } } | null)?.metadata?.namespace;
    if (typeof ns === 'string' && ns !== '') return ns;
  }
  return DEFAULT_NAMESPACE;
}
