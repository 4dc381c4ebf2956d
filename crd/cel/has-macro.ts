/**
 * `has(e.f)` on any operand, as cel-go allows: its parser turns `has(<select>)` into a presence test
 * of the select's field on whatever expression the select reads (`has(self.matches[0].path)`, as
 * Gateway API's HTTPRoute and GRPCRoute CRDs write). @marcbachmann/cel-js accepts only a chain of
 * selects down to an identifier and reports "has() invalid argument" otherwise, so the CRDs fail
 * to compile; and it never type-checks the tested field, so `has(self.zzz)` on an object without
 * `zzz` (or `has(self.constructor)`) compiled where the API server refuses it with "undefined field".
 * So every `has(<select>)` gets a macro that, for selects down to a variable, type-checks the select
 * as cel-go does (an error about the tested field at the has() call), and that stops the chain at the
 * first node that is not a select and evaluates that node as the operand, as the library's macro
 * evaluates a chain.
 */
import { EvaluationError } from '@marcbachmann/cel-js';
import { recordPresenceTest } from './common/presence-tests.ts';

/** The parts of the library's AST nodes, checker and evaluator that a macro uses. */
interface MacroNode {
  op: string;
  args: unknown;
  setMeta(key: string, value: unknown): MacroNode;
}
interface Checker {
  check(node: MacroNode, ctx: unknown): unknown;
  getType(name: string): unknown;
}
interface Evaluator {
  run(node: MacroNode, ctx: unknown): unknown;
  debugType(value: unknown): { fieldLazy(value: unknown, field: unknown, node: MacroNode, ev: Evaluator): unknown };
}
interface Macro {
  args: MacroNode[];
  evaluate(ev: Evaluator, macro: Macro, ctx: unknown): boolean;
  typeCheck(checker: Checker, macro: Macro, ctx: unknown): unknown;
}

const isSelect = (node: MacroNode) => node.op === '.' || node.op === '.?';

/** The selects of the argument, outermost first, then the operand they read. */
function chainOf(argument: MacroNode): MacroNode[] {
  const chain: MacroNode[] = [];
  let node = argument;
  while (isSelect(node)) {
    chain.push(node);
    node = (node.args as MacroNode[])[0] as MacroNode;
  }
  chain.push(node);
  return chain;
}

/** The library's presence test over `chain`, with any expression as the operand. */
function presenceMacro(call: MacroNode, argument: MacroNode): Macro {
  const chain = chainOf(argument);
  return {
    args: [argument],
    typeCheck(checker, _macro, ctx) {
      const operand = chain[chain.length - 1] as MacroNode;
      if (operand.op === 'id') {
        // Selects down to a variable have the declared types: the tested field must exist on its
        // object, as cel-go checks it. Other operands (literals, indexes) are checked as before: the
        // library types some of them in ways cel-go does not.
        recordPresenceTest(argument, call);
        checker.check(argument, ctx);
      } else checker.check(operand, ctx);
      return checker.getType('bool');
    },
    evaluate(ev, _macro, ctx) {
      let i = chain.length - 1;
      let value = ev.run(chain[i] as MacroNode, ctx);
      let optional: boolean | undefined;
      while (i-- > 0) {
        const node = chain[i] as MacroNode;
        if (node.op === '.?') optional ??= true;
        const field = (node.args as unknown[])[1];
        value = ev.debugType(value).fieldLazy(value, field, node, ev);
        if (value !== undefined) continue;
        // A missing field on the way to the tested one is an error, as in cel-go; the tested one is the answer.
        if (optional || i === 0 || node.op !== '.') break;
        throw new EvaluationError({
          code: 'no_such_key',
          message: `No such key: ${String(field)}`,
          node: node as never,
        });
      }
      return value !== undefined;
    },
  };
}

/** Gives every `has(<select>)` call the presence test of cel-go; returns how many calls it changed. */
export function allowPresenceTestsOnAnyOperand(nodes: Iterable<MacroNode>): number {
  let changed = 0;
  for (const node of nodes) {
    if (node.op !== 'call' || !Array.isArray(node.args) || node.args[0] !== 'has') continue;
    const callArgs = node.args[1] as MacroNode[] | undefined;
    const argument = callArgs?.length === 1 ? callArgs[0] : undefined;
    if (argument === undefined || argument.op !== '.') continue;
    node.setMeta('macro', presenceMacro(node, argument));
    changed++;
  }
  return changed;
}
