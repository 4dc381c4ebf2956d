/**
 * Putting a function in front of the evaluation of one node of a checked @marcbachmann/cel-js AST. A node
 * resolves its own evaluate function on first use and installs it on itself (lib/parser.js); an interceptor
 * stays in front of that, also when that first evaluation throws, and interceptors chain (the runtime cost
 * counter and the runtime guards both intercept).
 */

export type Evaluate = (this: unknown, ev: unknown, ast: unknown, ctx: unknown) => unknown;

export interface EvaluableNode {
  op: string;
  args: unknown;
  evaluate: Evaluate;
}

/** Runs instead of the node's evaluation; `evaluate` is the evaluation it stands in front of. */
export type Interceptor = (this: unknown, evaluate: Evaluate, ev: unknown, ast: unknown, ctx: unknown) => unknown;

export function interceptEvaluate(node: EvaluableNode, intercept: Interceptor): void {
  const resolve = (Object.getPrototypeOf(node) as { evaluate: Evaluate }).evaluate;
  let inner: Evaluate | undefined = Object.hasOwn(node, 'evaluate') ? node.evaluate : undefined;
  const firstUse: Evaluate = function (this: unknown, ev, ast, ctx) {
    const self = this as EvaluableNode;
    const installed = self.evaluate;
    try {
      return resolve.call(self, ev, ast, ctx);
    } finally {
      if (self.evaluate !== installed) inner = self.evaluate;
      self.evaluate = installed;
    }
  };
  node.evaluate = function (this: unknown, ev, ast, ctx) {
    return intercept.call(this, inner ?? firstUse, ev, ast, ctx);
  };
}
