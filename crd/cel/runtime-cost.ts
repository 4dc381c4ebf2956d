/**
 * Runtime cost tracking for rules that are not trivially cheap: every evaluated AST node is charged as cel-go's
 * runtime cost tracker charges interpretables (identifiers, selections, calls and operators 1, constants 0), plus
 * the per-iteration loop overhead of comprehension bodies; evaluation stops with cel-go's error once the per-call
 * limit is exceeded. Source: github.com/google/cel-go@v0.29.2/interpreter/runtimecost.go (approximated).
 * The counter lives on the compiled rule; evaluation is synchronous, so one counter per rule suffices.
 */

import { childNodes, MACRO_NAMES } from './parse.ts';

export interface CostCounter {
  cost: number;
  limit: number;
}

/** Thrown from inside an evaluation when the per-call limit is exceeded; runtimeErrorText maps it. */
export class CostLimitExceeded extends Error {
  override name = 'CostLimitExceeded';
  constructor() {
    super('operation cancelled: actual cost limit exceeded');
  }
}

type Evaluate = (this: unknown, ev: unknown, ast: unknown, ctx: unknown) => unknown;

interface InstrumentableNode {
  op: string;
  args: unknown;
  evaluate: Evaluate;
}

/** Loop condition + accumulator access per comprehension iteration (cel-go macro expansions). */
const ITERATION_OVERHEAD = 2;

const isNode = (x: unknown): x is InstrumentableNode =>
  typeof x === 'object' &&
  x !== null &&
  'op' in x &&
  'args' in x &&
  typeof (x as { evaluate?: unknown }).evaluate === 'function';

function charge(node: InstrumentableNode, counter: CostCounter, cost: number): void {
  const proto = (Object.getPrototypeOf(node) as { evaluate: Evaluate }).evaluate;
  let inner: Evaluate | undefined;
  const wrapper: Evaluate = function (this: unknown, ev, ast, ctx) {
    counter.cost += cost;
    if (counter.cost > counter.limit) throw new CostLimitExceeded();
    if (inner) return inner.call(this, ev, ast, ctx);
    // the library installs the node's own evaluate function on first use; keep ours in front of it
    const result = proto.call(this, ev, ast, ctx);
    inner = (this as InstrumentableNode).evaluate;
    (this as InstrumentableNode).evaluate = wrapper;
    return result;
  };
  node.evaluate = wrapper;
}

const children = (node: InstrumentableNode): InstrumentableNode[] => childNodes(node, isNode);

/** Instruments a checked AST so that evaluating it charges `counter`. */
export function instrumentProgram(ast: unknown, counter: CostCounter): void {
  const bodies = new Set<InstrumentableNode>();
  const walk = (node: InstrumentableNode) => {
    if (node.op === 'rcall' && Array.isArray(node.args) && MACRO_NAMES.has(node.args[0] as string)) {
      const args = node.args[2] as InstrumentableNode[];
      const body = args[args.length - 1];
      if (body) bodies.add(body);
    }
    const base = node.op === 'value' ? 0 : node.op === '&&' || node.op === '||' || node.op === '?:' ? 0 : 1;
    charge(node, counter, base + (bodies.has(node) ? ITERATION_OVERHEAD : 0));
    for (const c of children(node)) walk(c);
  };
  if (isNode(ast)) walk(ast);
}
