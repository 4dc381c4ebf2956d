/**
 * Parse + type check + the API server's AST validators (homogeneous literals outside format(), regex literals of
 * matches(), no cel.bind), producing cel-go's issue text on failure.
 * Sources: github.com/google/cel-go@v0.29.2/cel/validator.go; k8s.io/apiserver@v0.37.2/pkg/cel/environment/base.go.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { celGoTypeName, displayIssue, type LibraryError, toCelGoIssue, toCelGoIssues } from './common/issues.ts';
import type { RegexCache } from './library/re2.ts';
import {
  type ExpressionAst,
  findConstantConversions,
  findHeterogeneousLiterals,
  findInvalidTimeLiterals,
  findRegexLiteralErrors,
  findUnsupportedBindings,
  parseExpression,
} from './parse.ts';
import type { CostCounter } from './runtime-cost.ts';
import { runtimeErrorText } from './runtime-errors.ts';

export interface RuleProgram {
  ast: ExpressionAst;
  run: (activation: Record<string, unknown>) => unknown;
  /** Set for programs whose runtime cost is tracked (see runtime-cost.ts). */
  counter?: CostCounter;
}

export interface CheckedExpression {
  program?: RuleProgram;
  /** cel-go issues (parse, check, AST validators): "ERROR: <input>:L:C: ..." */
  issue?: string;
  /** Why cel-go would refuse to plan the program (constant folding of a failing conversion). */
  instantiationError?: string;
  type?: string;
}

export interface CheckOptions {
  /** The variables in scope (for the cel.bind diagnostics). */
  declared: ReadonlySet<string>;
  /**
   * Default true. False: only parse and type check, for rules of a CRD that passed the API server's
   * checks before (the AST validators and constant folding would find nothing).
   */
  refusals?: boolean;
}

/** Checks one expression. */
export function checkExpression(
  env: Environment,
  source: string,
  regexCache: RegexCache,
  { declared, refusals = true }: CheckOptions,
): CheckedExpression {
  let parsed: ReturnType<typeof parseExpression>;
  try {
    parsed = parseExpression(env, source);
  } catch (error) {
    return { issue: toCelGoIssue(error as LibraryError, source) };
  }
  const checked = parsed.check();
  if (!checked.valid) return { issue: toCelGoIssues(checked.errors as LibraryError[], source) };
  if (!refusals) return { program: { ast: parsed.ast, run: parsed.evaluate }, type: checked.type };
  const heterogeneous = findHeterogeneousLiterals(parsed.ast);
  if (heterogeneous.length > 0) {
    return {
      issue: heterogeneous
        .map((h) =>
          displayIssue(
            source,
            h.offset,
            `expected type '${celGoTypeName(h.expected)}' but found '${celGoTypeName(h.found)}'`,
          ),
        )
        .join('\n'),
    };
  }
  const bindings = findUnsupportedBindings(parsed.ast, source, declared);
  if (bindings.length > 0) {
    return {
      issue: bindings
        .map((b) => displayIssue(source, b.offset, `undeclared reference to '${b.name}' (in container '')`))
        .join('\n'),
    };
  }
  const regexIssues = findRegexLiteralErrors(parsed.ast, regexCache).map((offset) =>
    displayIssue(source, offset, 'invalid matches argument'),
  );
  if (regexIssues.length > 0) return { issue: regexIssues.join('\n') };
  const literalIssues = findInvalidTimeLiterals(parsed.ast).map((l) =>
    displayIssue(source, l.offset, `invalid ${l.name} argument`),
  );
  if (literalIssues.length > 0) return { issue: literalIssues.join('\n') };
  const program = { ast: parsed.ast, run: parsed.evaluate };
  for (const call of findConstantConversions(parsed.ast)) {
    try {
      const constant = parseExpression(env, source.slice(call.start, call.end));
      if (constant.check().valid) constant.evaluate({});
    } catch (error) {
      return { program, type: checked.type, instantiationError: runtimeErrorText(error) };
    }
  }
  return { program, type: checked.type };
}
