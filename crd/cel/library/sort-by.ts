/**
 * cel-go's `sortBy` macro of the extended list library (ext.Lists version 2 and later): `list.sortBy(e, key)`
 * sorts the list by the keys `key` gives its elements. cel-go expands it to a binding of the list and
 * `@sortByAssociatedKeys(list, list.map(e, key))`; here it is one @marcbachmann/cel-js macro with the same
 * type rules, errors and order (static cost in cost.ts; the panic on a failing list or key in runtime-guards.ts).
 * Source: github.com/google/cel-go@v0.29.2/ext/lists.go (sortByMacro, sortListByAssociatedKeys).
 */
import { type Environment, ParseError } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { CelFunctionError } from '../common/errors.ts';
import { CEL_GO_ISSUE, celGoTypeName } from '../common/issues.ts';
import { bindIterationValue } from '../common/null-values.ts';
import { type CelComparable, celCompare } from './compare.ts';
import type { AstNode, CheckContext, Checker, EvalContext, Evaluator, MacroInput, TypeDecl } from './macro-api.ts';

interface SortByMacro {
  call: AstNode;
  receiver: AstNode;
  variable: string;
  key: AstNode;
  keyCtx?: CheckContext;
}

/** The key types @sortByAssociatedKeys has overloads for (comparableTypes). */
const COMPARABLE_KEY_TYPES = new Set([
  'int',
  'uint',
  'double',
  'bool',
  'google.protobuf.Duration',
  'google.protobuf.Timestamp',
  'string',
  'bytes',
  'dyn',
]);

/** The receivers sortByMacro accepts: a list, identifier, comprehension, call or select expression. */
const SORTABLE_TARGETS = new Set(['list', 'id', '.', '.?', 'call', 'rcall']);

/** A key's runtime type when it is one of traits.Comparer's, else undefined. */
function comparableType(v: unknown): string | undefined {
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  if (v instanceof UnsignedInt) return 'uint';
  if (v instanceof Date) return 'timestamp';
  if (v instanceof Duration) return 'duration';
  if (v instanceof Uint8Array) return 'bytes';
  return undefined;
}

/**
 * sortListByAssociatedKeys: the first key must be comparable and every compared key of its type. Go's
 * sort.Slice sorts up to 12 elements by insertion sort, which keeps equal keys in list order; a stable sort
 * gives that order for every length (longer lists with equal keys may order differently in Go's pdqsort).
 */
export function sortByKeys(list: unknown[], keys: unknown[]): unknown[] {
  if (list.length !== keys.length) {
    throw new CelFunctionError(
      `@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got ${list.length} and ${keys.length} elements respectively`,
    );
  }
  if (list.length === 0) return list;
  const type = comparableType(keys[0]);
  if (type === undefined) throw new CelFunctionError('list elements must be comparable');
  if (keys.some((k) => comparableType(k) !== type)) throw new CelFunctionError('list elements must have the same type');
  const order = keys.map((_, i) => i);
  order.sort((i, j) => celCompare(keys[i] as CelComparable, keys[j] as CelComparable));
  return order.map((i) => list[i]);
}

function typeCheck(checker: Checker, m: SortByMacro, ctx: CheckContext): TypeDecl {
  const target = checker.check(m.receiver, ctx);
  const element = target.kind === 'list' ? (target.valueType ?? checker.getType('dyn')) : checker.getType('dyn');
  m.keyCtx = ctx.forkWithVariable(m.variable, element);
  const key = checker.check(m.key, m.keyCtx);
  const comparable = COMPARABLE_KEY_TYPES.has(key.name) || /^[A-Z]\d*$/.test(key.name);
  if ((target.kind !== 'list' && target.kind !== 'dyn') || !comparable) {
    const types = `${celGoTypeName(target.name)}.(list(${celGoTypeName(key.name)}))`;
    throw checker.createError(
      CEL_GO_ISSUE,
      `found no matching overload for '@sortByAssociatedKeys' applied to '${types}'`,
      m.call,
    );
  }
  return target.kind === 'list' ? target : checker.getType('list');
}

function evaluate(ev: Evaluator, m: SortByMacro, ctx: EvalContext): unknown {
  const list = ev.run(m.receiver, ctx);
  if (!Array.isArray(list)) throw new CelFunctionError('no such overload');
  const keyCtx = m.keyCtx as unknown as EvalContext;
  const keys = list.map((element) => ev.run(m.key, bindIterationValue(keyCtx.reuse(ctx), element, ev)));
  return sortByKeys(list, keys);
}

function sortByMacro({ ast, args, receiver }: MacroInput) {
  const variable = args[0];
  if (!SORTABLE_TARGETS.has(receiver.op)) {
    const message = 'sortBy can only be applied to a list, identifier, comprehension, call or select expression';
    throw new ParseError({ code: CEL_GO_ISSUE, message, node: receiver as never });
  }
  if (variable?.op !== 'id' || typeof variable.args !== 'string') {
    throw new ParseError({ code: CEL_GO_ISSUE, message: 'argument is not an identifier', node: variable as never });
  }
  const macro: SortByMacro = { call: ast, receiver, variable: variable.args, key: args[1] as AstNode };
  return {
    ...macro,
    typeCheck: (checker: Checker, m: SortByMacro, c: CheckContext) => typeCheck(checker, m, c),
    evaluate: (ev: Evaluator, m: SortByMacro, c: EvalContext) => evaluate(ev, m, c),
  };
}

export function registerSortBy(env: Environment): void {
  env.registerFunction('list.sortBy(ast, ast): list<dyn>', sortByMacro);
}
