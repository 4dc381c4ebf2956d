import { parseArgs } from 'node:util';
import { evaluateExpression } from '../crd/cel/index.ts';
import type { JSONSchemaProps } from '../kube/apiextensions.ts';
import { type CommandIO, UsageError } from './usage.ts';

export const celUsage = 'staticsite cel EXPR [--self JSON] [--old-self JSON] [--schema JSON] [-o json|text]';

function json(flag: string, text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--${flag}: invalid JSON: ${(error as Error).message}`);
  }
}

/**
 * `staticsite cel`: evaluates one CEL expression. `-o json` (default) prints {"value": ...} (exit 0)
 * or {"error": "..."} (exit 1); `-o text` prints the value alone (a string as it is, anything else
 * as JSON) or `error: ...` on standard error.
 */
export async function celCommand(args: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      self: { type: 'string' },
      'old-self': { type: 'string' },
      schema: { type: 'string' },
      output: { type: 'string', short: 'o', default: 'json' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length !== 1) throw new UsageError('expected exactly one expression');
  if (values.output !== 'json' && values.output !== 'text') {
    throw new UsageError(`unsupported output format "${values.output}" (json or text)`);
  }
  const result = evaluateExpression(positionals[0] as string, {
    self: json('self', values.self),
    oldSelf: json('old-self', values['old-self']),
    schema: json('schema', values.schema) as JSONSchemaProps | undefined,
  });
  if (values.output === 'json') {
    io.stdout(`${JSON.stringify(result)}\n`);
  } else if ('error' in result) {
    io.stderr(`error: ${result.error}\n`);
  } else {
    io.stdout(`${typeof result.value === 'string' ? result.value : JSON.stringify(result.value)}\n`);
  }
  return 'error' in result ? 1 : 0;
}
