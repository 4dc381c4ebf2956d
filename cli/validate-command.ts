import { parseArgs } from 'node:util';
import { admit, createCelEnvironment, type FieldValidation, simpleNameGenerator } from '../crd/index.ts';
import { UsageError } from './usage.ts';
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
import { createReporter, OUTPUT_FORMATS, type OutputFormat, type Totals } from './validate/report.ts';
import { SchemaSet } from './validate/schemas.ts';

export type { ValidateIO } from './validate/documents.ts';

export const validateUsage =
  'staticsite validate [--crd PATH]... [--ignore-missing-schemas] [--version V] [--old FILE] [--field-validation Strict|Warn|Ignore] [-o text|json|junit|tap] PATH...';

const FIELD_VALIDATIONS: readonly FieldValidation[] = ['Strict', 'Warn', 'Ignore'];
/** kubectl asks for Strict, so a file that kubectl would reject is rejected here too. */
const DEFAULT_FIELD_VALIDATION: FieldValidation = 'Strict';
/** kubectl's namespace when the object names none. */
const DEFAULT_NAMESPACE = 'default';

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

async function validate(args: string[], io: ValidateIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      crd: { type: 'string', multiple: true, default: [] },
      version: { type: 'string' },
      old: { type: 'string' },
      'field-validation': { type: 'string', default: DEFAULT_FIELD_VALIDATION },
      'ignore-missing-schemas': { type: 'boolean', default: false },
      output: { type: 'string', short: 'o', default: 'text' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length === 0)
    throw new UsageError('expected at least one PATH (a file, a directory, or - for standard input)');
  const fieldValidation = values['field-validation'] as FieldValidation;
  if (!FIELD_VALIDATIONS.includes(fieldValidation)) {
    throw new UsageError(
      `--field-validation must be one of ${FIELD_VALIDATIONS.join(', ')}, not ${JSON.stringify(fieldValidation)}`,
    );
  }
  const format = values.output as OutputFormat;
  if (!OUTPUT_FORMATS.includes(format)) {
    throw new UsageError(`-o must be one of ${OUTPUT_FORMATS.join(', ')}, not ${JSON.stringify(values.output)}`);
  }
  const inputs = await expandPaths(positionals);
  const schemas = await SchemaSet.load(values.crd, io, {
    environment: createCelEnvironment(),
    version: values.version,
  });
  const oldObject =
    values.old === undefined ? undefined : (await parseDocuments(await readText(values.old, io), values.old))[0];

  const reporter = createReporter(format, io.stdout);
  const totals: Totals = { files: inputs.length, valid: 0, invalid: 0, errors: 0, skipped: 0 };
  for (const input of inputs) {
    const file = input === '-' ? '<stdin>' : input;
    try {
      for await (const parsed of documentsOf(chunksOf(input, io))) {
        await io.stdoutDrained?.();
        const document = parsed.index;
        if ('error' in parsed) {
          totals.errors++;
          reporter.add({ file, document, label: '', status: 'error', message: parsed.error, warnings: [] });
          continue;
        }
        const object = parsed.object;
        const label = describe(object);
        const version = schemas.versionFor(object);
        if (!version) {
          const missing = `no schema for ${kindOf(object)}: give its CRD with --crd`;
          const skip = values['ignore-missing-schemas'];
          if (skip) totals.skipped++;
          else totals.errors++;
          reporter.add({
            file,
            document,
            label,
            status: skip ? 'skipped' : 'error',
            message: skip ? missing : `${missing}, or pass --ignore-missing-schemas`,
            warnings: [],
          });
          continue;
        }
        const result = admit(version, object, {
          fieldValidation,
          oldObject,
          // The request's namespace: kubectl sends the object's, or on update the stored object's.
          namespace: version.target.namespaced ? namespaceOf(object, oldObject) : undefined,
          generateName: simpleNameGenerator(),
        });
        if (result.allowed) totals.valid++;
        else totals.invalid++;
        reporter.add({
          file,
          document,
          label,
          status: result.allowed ? 'valid' : 'invalid',
          message: result.allowed ? '' : result.message,
          // The API server warns of a deprecated version before anything else of the request.
          warnings: [...version.deprecationWarnings, ...result.warnings],
          result,
        });
      }
    } catch (error) {
      // A file that cannot be read is one error among the results; the other files still count.
      if (!(error instanceof UnreadableInput)) throw error;
      totals.errors++;
      reporter.add({ file, label: '', status: 'error', message: error.message, warnings: [] });
    }
  }
  if (totals.valid + totals.invalid + totals.errors + totals.skipped === 0) {
    const where = inputs.length === 1 ? (inputs[0] === '-' ? '<stdin>' : inputs[0]) : `${inputs.length} files`;
    throw new InputError(`${where}: no objects to validate`);
  }
  reporter.end(totals);
  return totals.errors > 0 ? 2 : totals.invalid > 0 ? 1 : 0;
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
