/**
 * The parts of @marcbachmann/cel-js's macro API (lib/macros.js) our macros use: a macro registered with
 * `ast` parameters gets its call's AST, type checks its parts with the checker and evaluates them with
 * the evaluator, binding iteration variables in forked contexts.
 */
export interface AstNode {
  op: string;
  args: unknown;
}

export interface TypeDecl {
  kind: string;
  name: string;
  keyType?: TypeDecl;
  valueType?: TypeDecl;
}

export interface CheckContext {
  forkWithVariable(name: string, type: TypeDecl): CheckContext;
}

export interface EvalContext {
  iterValue: unknown;
  reuse(parent: unknown): EvalContext;
  setIterValue(v: unknown, ev: unknown): EvalContext;
}

export interface Checker {
  check(node: AstNode, ctx: CheckContext): TypeDecl;
  getType(name: string): TypeDecl;
  registry: {
    getListType(t: TypeDecl): TypeDecl;
    getMapType(k: TypeDecl, v: TypeDecl): TypeDecl;
    getOptionalType(t: TypeDecl): TypeDecl;
  };
  createError(code: string, message: string, node: AstNode): Error;
}

export interface Evaluator {
  run(node: AstNode, ctx: unknown): unknown;
}

/** What a macro's factory receives when the parser meets its call. */
export interface MacroInput {
  ast: AstNode;
  args: AstNode[];
  receiver: AstNode;
}
