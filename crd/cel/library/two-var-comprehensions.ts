/**
 * cel-go two-variable comprehensions (ext.TwoVarComprehensions, Kubernetes 1.32+): all(k, v, p), exists(k, v, p),
 * existsOne(k, v, p), transformList(i, v, [filter,] expr), transformMap(k, v, [filter,] expr),
 * transformMapEntry(k, v, [filter,] expr). Implemented as @marcbachmann/cel-js macros.
 * Source: github.com/google/cel-go@v0.29.2/ext/comprehensions.go.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { CelFunctionError } from '../common/errors.ts';
import { bindIterationValue } from '../common/null-values.ts';
import type { AstNode, CheckContext, Checker, EvalContext, Evaluator, MacroInput, TypeDecl } from './macro-api.ts';

interface Macro {
  receiver: AstNode;
  first: string;
  second: string;
  exprs: AstNode[];
  firstCtx?: CheckContext;
  secondCtx?: CheckContext;
}

type Kind = 'all' | 'exists' | 'existsOne' | 'transformList' | 'transformMap' | 'transformMapEntry';

function identifier(node: AstNode | undefined, checkerless: string): string {
  if (node?.op === 'id' && typeof node.args === 'string') return node.args;
  throw new CelFunctionError(checkerless);
}

function entries(v: unknown): Array<[unknown, unknown]> {
  if (Array.isArray(v)) return v.map((x, i) => [BigInt(i), x]);
  if (v instanceof Map) return [...v.entries()];
  if (v && typeof v === 'object') return Object.entries(v);
  throw new CelFunctionError(`expression of type '${typeof v}' cannot be range of a comprehension`);
}

/** The type of the comprehension: bool, or the list or map it builds. */
function resultType(kind: Kind, checker: Checker, m: Macro, ctx: CheckContext): TypeDecl {
  const rt = checker.check(m.receiver, ctx);
  const isMap = rt.kind === 'map';
  const dyn = checker.getType('dyn');
  const firstType = rt.kind === 'list' ? checker.getType('int') : isMap ? (rt.keyType ?? dyn) : dyn;
  const secondType = rt.kind === 'list' || isMap ? (rt.valueType ?? dyn) : dyn;
  m.firstCtx = ctx.forkWithVariable(m.first, firstType);
  m.secondCtx = m.firstCtx.forkWithVariable(m.second, secondType);
  const types = m.exprs.map((e) => checker.check(e, m.secondCtx as CheckContext));
  const last = types[types.length - 1] ?? dyn;
  switch (kind) {
    case 'all':
    case 'exists':
    case 'existsOne':
      return checker.getType('bool');
    case 'transformList':
      return checker.registry.getListType(last);
    case 'transformMap':
      return checker.registry.getMapType(firstType, last);
    case 'transformMapEntry':
      return last.kind === 'map' ? last : checker.registry.getMapType(dyn, dyn);
  }
}

/** Evaluates an expression with the two iteration variables bound. */
type Step = (node: AstNode, k: unknown, v: unknown) => unknown;

/**
 * The predicate's value for one entry. A value that is not a bool (a null item) is what cel-go's `&&`,
 * `||` or `?:` of the expansion make of it: no such overload.
 */
function predicateValue(step: Step, predicate: AstNode, k: unknown, v: unknown): boolean {
  const value = step(predicate, k, v);
  if (typeof value !== 'boolean') throw new CelFunctionError('no such overload');
  return value;
}

/**
 * all (`wanted` false) and exists (`wanted` true): `wanted` as soon as one entry gives it; else the first
 * error, if any entry failed; else the opposite.
 */
function quantify(items: Array<[unknown, unknown]>, step: Step, predicate: AstNode, wanted: boolean): boolean {
  let error: unknown;
  for (const [k, v] of items) {
    try {
      if (predicateValue(step, predicate, k, v) === wanted) return wanted;
    } catch (err) {
      error ??= err;
    }
  }
  if (error) throw error;
  return !wanted;
}

/** transformList, transformMap, transformMapEntry: the entries `filter` (when given) keeps, mapped by `map`. */
function transform(kind: Kind, items: Array<[unknown, unknown]>, step: Step, exprs: AstNode[]): unknown {
  const [e0, e1] = exprs as [AstNode, AstNode | undefined];
  const list: unknown[] = [];
  const map = new Map<unknown, unknown>();
  for (const [k, v] of items) {
    if (e1 !== undefined && !predicateValue(step, e0, k, v)) continue;
    const result = step(e1 ?? e0, k, v);
    if (kind === 'transformList') list.push(result);
    else if (kind === 'transformMap') map.set(k, result);
    else {
      for (const [ek, evv] of entries(result)) {
        if (map.has(ek)) throw new CelFunctionError(`insert failed: key ${String(ek)} already exists`);
        map.set(ek, evv);
      }
    }
  }
  return kind === 'transformList' ? list : map;
}

function evaluateComprehension(kind: Kind, ev: Evaluator, m: Macro, ctx: EvalContext): unknown {
  const range = ev.run(m.receiver, ctx);
  const firstCtx = m.firstCtx as unknown as EvalContext;
  const secondCtx = m.secondCtx as unknown as EvalContext;
  const step: Step = (node, k, v) => {
    const c1 = bindIterationValue(firstCtx.reuse(ctx), k, ev);
    const c2 = bindIterationValue(secondCtx.reuse(c1), v, ev);
    return ev.run(node, c2);
  };
  const items = entries(range);
  const predicate = m.exprs[0] as AstNode;
  switch (kind) {
    case 'all':
      return quantify(items, step, predicate, false);
    case 'exists':
      return quantify(items, step, predicate, true);
    case 'existsOne':
      return items.filter(([k, v]) => predicateValue(step, predicate, k, v)).length === 1;
    default:
      return transform(kind, items, step, m.exprs);
  }
}

function makeMacro(kind: Kind) {
  return ({ args, receiver }: MacroInput) => {
    const macro: Macro = {
      receiver,
      first: identifier(args[0], `${kind}() variable name must be a simple identifier`),
      second: identifier(args[1], `${kind}() variable name must be a simple identifier`),
      exprs: args.slice(2),
    };
    return {
      ...macro,
      typeCheck: (checker: Checker, m: Macro, ctx: CheckContext) => resultType(kind, checker, m, ctx),
      evaluate: (ev: Evaluator, m: Macro, ctx: EvalContext) => evaluateComprehension(kind, ev, m, ctx),
    };
  };
}

export function registerTwoVarComprehensions(env: Environment): void {
  for (const receiver of ['list', 'map']) {
    for (const kind of ['all', 'exists', 'existsOne', 'transformList', 'transformMap', 'transformMapEntry'] as const) {
      env.registerFunction(`${receiver}.${kind}(ast, ast, ast): dyn`, makeMacro(kind));
    }
    // cel-go registers existsOne under the one-variable macro's name too
    env.registerFunction(`${receiver}.exists_one(ast, ast, ast): dyn`, makeMacro('existsOne'));
    for (const kind of ['transformList', 'transformMap', 'transformMapEntry'] as const) {
      env.registerFunction(`${receiver}.${kind}(ast, ast, ast, ast): dyn`, makeMacro(kind));
    }
  }
}
