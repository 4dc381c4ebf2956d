/**
 * Runtime cost tracking for rules that are not trivially cheap: every evaluated AST node is charged as cel-go's
 * runtime cost tracker charges interpretables (identifiers, selections, calls and operators 1, constants 0), plus
 * the per-iteration loop overhead of comprehension bodies; evaluation stops with cel-go's error once the per-call
 * limit is exceeded. Source: github.com/google/cel-go@v0.29.2/interpreter/runtimecost.go (approximated).
 * The counter lives on the compiled rule; evaluation is synchronous, so one counter per rule suffices.
 */

import { type EvaluableNode, interceptEvaluate } from './common/node-evaluate.ts';
import { childNodes, MACRO_NAMES } from './parse.ts';
import { CostLimitExceeded } from './runtime-errors.ts';

export interface CostCounter {
  cost: number;
  limit: number;
}

/** Loop condition + accumulator access per comprehension iteration (cel-go macro expansions). */
const ITERATION_OVERHEAD = 2;

const isNode = (x: unknown): x is EvaluableNode =>
  typeof x === 'object' &&
  x !== null &&
  'op' in x &&
  'args' in x &&
  typeof (x as { evaluate?: unknown }).evaluate === 'function';

function charge(node: EvaluableNode, counter: CostCounter, cost: number): void {
  interceptEvaluate(node, function (evaluate, ev, ast, ctx) {
    counter.cost += cost;
    if (counter.cost > counter.limit) throw new CostLimitExceeded();
    return evaluate.call(this, ev, ast, ctx);
  });
}

const children = (node: EvaluableNode): EvaluableNode[] => childNodes(node, isNode);

/** Instruments a checked AST so that evaluating it charges `counter`. */
export function instrumentProgram(ast: unknown, counter: CostCounter): void {
  const bodies = new Set<EvaluableNode>();
  const walk = (node: EvaluableNode) => {
    if (node.op === 'rcall' && Array.isArray(node.args) && MACRO_NAMES.has(node.args[0] as string)) {
      const args = node.args[2] as EvaluableNode[];
      const body = args[args.length - 1];
      if (body) bodies.add(body);
    }
    const base = node.op === 'value' ? 0 : node.op === '&&' || node.op === '||' || node.op === '?:' ? 0 : 1;
    charge(node, counter, base + (bodies.has(node) ? ITERATION_OVERHEAD : 0));
    for (const c of children(node)) walk(c);
  };
  if (isNode(ast)) walk(ast);
}
