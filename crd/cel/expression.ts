/**
 * One-off evaluation of an expression (the `staticsite cel` command): `self`/`oldSelf` typed from a schema when
 * one is given, otherwise JSON values with integers as int. The result is converted back to JSON.
 */
import { Optional } from '@marcbachmann/cel-js';
import { Duration } from '@marcbachmann/cel-js/evaluator';
import type { JSONSchemaProps } from '../apiextensions.ts';
import { checkExpression } from './check.ts';
import { formatDurationSeconds } from './common/duration.ts';
import { schemaDeclType } from './decl-types.ts';
import { baseEnvironment, ObjectTypeTable } from './environment.ts';
import { PER_CALL_LIMIT } from './limits.ts';
import { instrumentProgram } from './runtime-cost.ts';
import { runtimeErrorText } from './runtime-errors.ts';
import { plainToCel, toCelValue } from './values.ts';

export interface ExpressionInput {
  self?: unknown;
  oldSelf?: unknown;
  schema?: JSONSchemaProps;
}

export type ExpressionResult = { value: unknown } | { error: string };

/** A CEL runtime value as JSON: ints as numbers (strings beyond 2^53), maps as objects, timestamps RFC 3339. */
export function celToJson(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Optional) return v.hasValue() ? celToJson(v.value()) : null;
  if (Array.isArray(v)) return v.map(celToJson);
  if (v instanceof Map) return Object.fromEntries([...v.entries()].map(([k, x]) => [String(k), celToJson(x)]));
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Duration) return formatDurationSeconds(v);
  if (v !== null && typeof v === 'object') {
    // type values print as their CEL name (the library's Type prints as Type<name>)
    const text = String(v);
    return /^Type<.*>$/.test(text) ? text.slice(5, -1) : text;
  }
  return v;
}

function activationInput(input: ExpressionInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (input.self !== undefined) out.self = input.self;
  if (input.oldSelf !== undefined) out.oldSelf = input.oldSelf;
  return out;
}

export function evaluateExpression(expression: string, input: ExpressionInput = {}): ExpressionResult {
  const env = baseEnvironment(new Map());
  const table = new ObjectTypeTable();
  const decl = input.schema ? schemaDeclType(input.schema, false) : undefined;
  const typeName = decl ? table.typeName(env, decl) : 'dyn';
  const scoped = env.clone();
  if (input.self !== undefined) scoped.registerVariable('self', typeName);
  if (input.oldSelf !== undefined) scoped.registerVariable('oldSelf', typeName);
  const convert = (v: unknown) => (decl ? toCelValue(v, decl, (d) => table.classOf(d)) : plainToCel(v));
  const declared = new Set(Object.keys(activationInput(input)));
  const checked = checkExpression(scoped, expression, new Map(), { declared });
  if (checked.issue !== undefined || !checked.program)
    return { error: checked.issue ?? 'unexpected compilation error' };
  // The API server's per-call limit (celconfig.PerCallLimit), as for every rule it evaluates.
  checked.program.counter = { cost: 0, limit: PER_CALL_LIMIT };
  instrumentProgram(checked.program.ast, checked.program.counter);
  const activation: Record<string, unknown> = {};
  if (input.self !== undefined) activation.self = convert(input.self);
  if (input.oldSelf !== undefined) activation.oldSelf = convert(input.oldSelf);
  try {
    return { value: celToJson(checked.program.run(activation)) };
  } catch (error) {
    return { error: runtimeErrorText(error) };
  }
}
