import {
  admit,
  createCelEnvironment,
  type FieldValidation,
  recordWarnings,
  simpleNameGenerator,
  type TextDecoding,
} from '../crd/index.ts';
import { ENGINE_MESSAGE_LIMIT } from '../webhook/admission/bounds.ts';
import { CommandLine, oneOf } from './flags.ts';
import { UsageError } from './usage.ts';
import { CrdCache, defaultCacheDir, runningBuildId } from './validate/crd-cache.ts';
import {
  chunksOf,
  documentsOf,
  InputError,
  parseDocuments,
  readText,
  UnreadableInput,
  type ValidateIO,
} from './validate/documents.ts';
import { expandPaths } from './validate/inputs.ts';
import { createReporter, OUTPUT_FORMATS, type Totals } from './validate/report.ts';
import { SchemaSet } from './validate/schemas.ts';

export type { ValidateIO } from './validate/documents.ts';

const FIELD_VALIDATIONS: readonly FieldValidation[] = ['Strict', 'Warn', 'Ignore'];
/** kubectl asks for Strict, so a file that kubectl would reject is rejected here too. */
const DEFAULT_FIELD_VALIDATION: FieldValidation = 'Strict';
/** kubectl's namespace when the object names none. */
const DEFAULT_NAMESPACE = 'default';

const VALIDATE = new CommandLine(
  'validate',
  {
    crd: {
      type: 'string',
      multiple: true,
      default: [],
      value: 'PATH',
      help: 'CRDs of any group and kind, files or directories (the StaticSite CRD is built in)',
    },
    'ignore-missing-schemas': { type: 'boolean', default: false, help: 'skip an object of a kind with no CRD' },
    version: { type: 'string', value: 'V', help: 'check against this version of the CRDs' },
    old: { type: 'string', value: 'FILE', help: 'the stored object: admit each as an update of it' },
    'field-validation': {
      type: 'string',
      default: DEFAULT_FIELD_VALIDATION,
      value: FIELD_VALIDATIONS.join('|'),
      help: 'what an unknown or duplicate field is, as kubectl --validate',
    },
    'cache-dir': {
      type: 'string',
      value: 'DIR',
      help: 'where CRD files already read and checked are remembered, by content (default $XDG_CACHE_HOME/staticsite/validate)',
    },
    'no-cache': { type: 'boolean', default: false, help: 'read and check every CRD file anew, remember nothing' },
    output: {
      type: 'string',
      short: 'o',
      default: 'text',
      value: OUTPUT_FORMATS.join('|'),
      help: 'text, JSON Lines, JUnit XML or TAP 13',
    },
  },
  'PATH...',
);

export const usage = VALIDATE.synopsis();
export const help = VALIDATE.help();

/** `Kind/name` of an object, with placeholders for what it lacks. */
function describe(object: unknown): string {
  const o = object as { kind?: unknown; metadata?: { name?: unknown } } | null;
  const name = typeof o?.metadata?.name === 'string' ? o.metadata.name : '(no name)';
  return `${typeof o?.kind === 'string' ? o.kind : '(no kind)'}/${name}`;
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

/** One run: the schemas, the options every object is admitted with, and where results go. */
interface Run {
  schemas: SchemaSet;
  fieldValidation: FieldValidation;
  oldObject: unknown;
  ignoreMissingSchemas: boolean;
  reporter: ReturnType<typeof createReporter>;
  totals: Totals;
}

async function validate(args: string[], io: ValidateIO): Promise<number> {
  const { values, positionals } = VALIDATE.parse(args);
  if (positionals.length === 0)
    throw new UsageError('expected at least one PATH (a file, a directory, or - for standard input)');
  const fieldValidation = oneOf('--field-validation', values['field-validation'], FIELD_VALIDATIONS);
  const format = oneOf('-o', values.output, OUTPUT_FORMATS);
  const inputs = await expandPaths(positionals);
  const cacheDir = values['no-cache'] ? undefined : (values['cache-dir'] ?? defaultCacheDir());
  const schemas = await SchemaSet.load(values.crd, io, {
    environment: createCelEnvironment(),
    version: values.version,
    cache: new CrdCache(cacheDir, runningBuildId()),
  });
  const oldObject =
    values.old === undefined ? undefined : parseDocuments(await readText(values.old, io), values.old)[0];
  const run: Run = {
    schemas,
    fieldValidation,
    oldObject,
    ignoreMissingSchemas: values['ignore-missing-schemas'],
    reporter: createReporter(format, io.stdout),
    totals: { files: inputs.length, valid: 0, invalid: 0, errors: 0, skipped: 0 },
  };
  for (const input of inputs) await validateInput(input, run, io);
  const { totals } = run;
  if (totals.valid + totals.invalid + totals.errors + totals.skipped === 0) {
    const where = inputs.length === 1 ? (inputs[0] === '-' ? '<stdin>' : inputs[0]) : `${inputs.length} files`;
    throw new InputError(`${where}: no objects to validate`);
  }
  run.reporter.end(totals);
  return totals.errors > 0 ? 2 : totals.invalid > 0 ? 1 : 0;
}

/** Every document of one input, each reported; a file that cannot be read is one error among the results. */
async function validateInput(input: string, run: Run, io: ValidateIO): Promise<void> {
  const file = input === '-' ? '<stdin>' : input;
  const { reporter, totals } = run;
  try {
    for await (const parsed of documentsOf(chunksOf(input, io))) {
      await io.stdoutDrained?.();
      const document = parsed.index;
      if ('error' in parsed) {
        totals.errors++;
        reporter.add({ file, document, label: '', status: 'error', message: parsed.error, warnings: [] });
      } else admitDocument(parsed.object, { file, document }, run, parsed.textDecoding);
    }
  } catch (error) {
    // The other files still count.
    if (!(error instanceof UnreadableInput)) throw error;
    totals.errors++;
    reporter.add({ file, label: '', status: 'error', message: error.message, warnings: [] });
  }
}

/** One object admitted against the CRD of its group and kind, or an error (or a skip) when there is none. */
function admitDocument(
  object: unknown,
  where: { file: string; document: number },
  run: Run,
  textDecoding?: TextDecoding,
): void {
  const { reporter, totals, oldObject } = run;
  const label = describe(object);
  const version = run.schemas.versionFor(object);
  if (!version) {
    const missing = `no schema for ${kindOf(object)}: give its CRD with --crd`;
    const skip = run.ignoreMissingSchemas;
    if (skip) totals.skipped++;
    else totals.errors++;
    reporter.add({
      ...where,
      label,
      status: skip ? 'skipped' : 'error',
      message: skip ? missing : `${missing}, or pass --ignore-missing-schemas`,
      warnings: [],
    });
    return;
  }
  const result = admit(version, object, {
    fieldValidation: run.fieldValidation,
    oldObject,
    // The request's namespace: kubectl sends the object's, or on update the stored object's.
    namespace: version.target.namespaced ? namespaceOf(object, oldObject) : undefined,
    generateName: simpleNameGenerator(),
    messageLimit: ENGINE_MESSAGE_LIMIT,
    ...(textDecoding && { textDecoding }),
  });
  if (result.allowed) totals.valid++;
  else totals.invalid++;
  reporter.add({
    ...where,
    label,
    status: result.allowed ? 'valid' : 'invalid',
    message: result.allowed ? '' : result.message,
    // The API server warns of a deprecated version before anything else of the request.
    warnings: recordWarnings([...version.deprecationWarnings, ...result.warnings]),
    result,
  });
}

function kindOf(object: unknown): string {
  const { apiVersion, kind } = (object ?? {}) as { apiVersion?: unknown; kind?: unknown };
  return `${typeof apiVersion === 'string' ? apiVersion : '(no apiVersion)'}, Kind=${typeof kind === 'string' ? kind : '(no kind)'}`;
}

function namespaceOf(object: unknown, oldObject: unknown): string {
  for (const o of [object, oldObject]) {
    const ns = (o as { metadata?: { namespace?: unknown } } | null)?.metadata?.namespace;
    if (typeof ns === 'string' && ns !== '') return ns;
  }
  return DEFAULT_NAMESPACE;
}

export { validateCommand as run };
