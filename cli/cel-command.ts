import type { JSONSchemaProps } from '../crd/apiextensions.ts';
import { evaluateExpression } from '../crd/cel/index.ts';
import { CommandLine, oneOf } from './flags.ts';
import { type CommandIO, UsageError } from './usage.ts';

const CEL = new CommandLine(
  'cel',
  {
    self: { type: 'string', value: 'JSON', help: 'the value of self' },
    'old-self': { type: 'string', value: 'JSON', help: 'the value of oldSelf (a transition rule)' },
    schema: { type: 'string', value: 'JSON', help: "self's OpenAPI schema: its types, formats and cost bounds" },
    output: {
      type: 'string',
      short: 'o',
      default: 'json',
      value: 'json|text',
      help: 'json: {"value": ...}; text: the value alone',
    },
  },
  'EXPR',
);

export const usage = CEL.synopsis();
export const help = CEL.help();

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
  const { values, positionals } = CEL.parse(args);
  if (positionals.length !== 1) throw new UsageError('expected exactly one expression');
  const output = oneOf('-o', values.output, ['json', 'text']);
  const result = evaluateExpression(positionals[0] as string, {
    self: json('self', values.self),
    oldSelf: json('old-self', values['old-self']),
    schema: json('schema', values.schema) as JSONSchemaProps | undefined,
  });
  if (output === 'json') {
    io.stdout(`${JSON.stringify(result)}\n`);
  } else if ('error' in result) {
    io.stderr(`error: ${result.error}\n`);
  } else {
    io.stdout(`${typeof result.value === 'string' ? result.value : JSON.stringify(result.value)}\n`);
  }
  return 'error' in result ? 1 : 0;
}

export { celCommand as run };
