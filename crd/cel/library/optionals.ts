/**
 * cel-go's optional library beyond what @marcbachmann/cel-js gives, at the version the Kubernetes base
 * environment enables (cel.OptionalTypes() without a version: the latest): list first() and last(),
 * optional.unwrap() and unwrapOpt(), and the optMap and optFlatMap macros.
 * Source: github.com/google/cel-go@v0.29.2/cel/library.go (optionalLib).
 */
import { type Environment, Optional, ParseError } from '@marcbachmann/cel-js';
import { CelFunctionError } from '../common/errors.ts';
import { CEL_GO_ISSUE, celGoTypeName } from '../common/issues.ts';
import { bindIterationValue } from '../common/null-values.ts';
import { celEquals } from './compare.ts';
import type { AstNode, CheckContext, Checker, EvalContext, Evaluator, MacroInput, TypeDecl } from './macro-api.ts';

interface OptionalMacro {
  /** The macro's call, where cel-go reports the errors of its expansion. */
  call: AstNode;
  receiver: AstNode;
  variable: string;
  body: AstNode;
  bodyCtx?: CheckContext;
}

type Kind = 'optMap' | 'optFlatMap';

const first = (list: unknown[]) => (list.length === 0 ? Optional.none() : Optional.of(list[0]));
const last = (list: unknown[]) => (list.length === 0 ? Optional.none() : Optional.of(list[list.length - 1]));
/** types.Optional's Equal: both empty, or both present with equal values. */
const optionalEquals = (a: Optional, b: Optional) =>
  a.hasValue() && b.hasValue() ? celEquals(a.value(), b.value()) : a.hasValue() === b.hasValue();
/** optUnwrap: the values of the present optionals, in order. */
const unwrap = (list: Optional[]) => list.filter((o) => o.hasValue()).map((o) => o.value());

function typeCheck(kind: Kind, checker: Checker, m: OptionalMacro, ctx: CheckContext): TypeDecl {
  const target = checker.check(m.receiver, ctx);
  if (target.kind !== 'optional' && target.kind !== 'dyn') {
    const type = celGoTypeName(String(target));
    throw checker.createError(
      CEL_GO_ISSUE,
      `found no matching overload for 'hasValue' applied to '${type}.()'`,
      m.call,
    );
  }
  m.bodyCtx = ctx.forkWithVariable(m.variable, target.valueType ?? checker.getType('dyn'));
  const body = checker.check(m.body, m.bodyCtx);
  if (kind === 'optMap') return checker.registry.getOptionalType(body);
  if (body.kind !== 'optional' && body.kind !== 'dyn') {
    const types = `(bool, ${celGoTypeName(String(body))}, optional_type(dyn))`;
    throw checker.createError(CEL_GO_ISSUE, `found no matching overload for '_?_:_' applied to '${types}'`, m.call);
  }
  return body.kind === 'dyn' ? checker.registry.getOptionalType(body) : body;
}

/** The expansion's `target.hasValue() ? optional.of(<body with the value bound>) : optional.none()`. */
function evaluate(kind: Kind, ev: Evaluator, m: OptionalMacro, ctx: EvalContext): unknown {
  const target = ev.run(m.receiver, ctx);
  if (!(target instanceof Optional)) throw new CelFunctionError('no such overload');
  if (!target.hasValue()) return Optional.none();
  const bound = bindIterationValue((m.bodyCtx as unknown as EvalContext).reuse(ctx), target.value(), ev);
  const result = ev.run(m.body, bound);
  if (kind === 'optMap') return Optional.of(result);
  if (!(result instanceof Optional)) throw new CelFunctionError('no such overload');
  return result;
}

function makeMacro(kind: Kind) {
  return ({ ast, args, receiver }: MacroInput) => {
    const variable = args[0];
    if (variable?.op !== 'id' || typeof variable.args !== 'string') {
      const message = `${kind}() variable name must be a simple identifier`;
      throw new ParseError({ code: CEL_GO_ISSUE, message, node: variable as never });
    }
    const macro: OptionalMacro = { call: ast, receiver, variable: variable.args, body: args[1] as AstNode };
    return {
      ...macro,
      typeCheck: (checker: Checker, m: OptionalMacro, ctx: CheckContext) => typeCheck(kind, checker, m, ctx),
      evaluate: (ev: Evaluator, m: OptionalMacro, ctx: EvalContext) => evaluate(kind, ev, m, ctx),
    };
  };
}

export function registerOptionals(env: Environment): void {
  env.registerFunction('list<A>.first(): optional<A>', first);
  env.registerFunction('list<A>.last(): optional<A>', last);
  env.registerFunction('OptionalNamespace.unwrap(list<optional<A>>): list<A>', (_: unknown, list: Optional[]) =>
    unwrap(list),
  );
  env.registerFunction('list<optional<A>>.unwrapOpt(): list<A>', unwrap);
  env.registerOperator('optional<A> == optional<A>', optionalEquals);
  env.registerFunction('optional.optMap(ast, ast): optional<dyn>', makeMacro('optMap'));
  env.registerFunction('optional.optFlatMap(ast, ast): optional<dyn>', makeMacro('optFlatMap'));
}
