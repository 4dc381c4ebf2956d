/** Building CEL text from parts: the rule table and the hostname default generate their expressions with these. */

/** A CEL string literal (single-quoted) whose value is `text`. */
export function celString(text: string): string {
  const escaped = text.replaceAll('\\', '\\\\').replaceAll("'", "\\'").replaceAll('\n', '\\n').replaceAll('\r', '\\r');
  return `'${escaped}'`;
}

/** CEL's reserved words: none of them can be selected as a field (`object.in` does not parse). */
const RESERVED: ReadonlySet<string> = new Set([
  ...['as', 'break', 'const', 'continue', 'else', 'false', 'for', 'function', 'if', 'import', 'in'],
  ...['let', 'loop', 'namespace', 'null', 'package', 'return', 'true', 'var', 'void', 'while'],
]);

/**
 * The field selection `root.a.b` of a path below a variable. Throws for a field name CEL cannot select
 * as written (not an identifier, or a reserved word): the API server escapes those in a CRD's rules,
 * and a generator that selected them verbatim would emit an expression that does not compile.
 */
export function celSelect(root: string, path: readonly string[]): string {
  for (const field of path) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field) || RESERVED.has(field)) {
      throw new Error(`field ${JSON.stringify(field)} cannot be selected in CEL as written`);
    }
  }
  return [root, ...path].join('.');
}

/** Where the string literal that opens at `start` (a quote character) ends, raw (r'...') and triple-quoted forms included. */
function stringEnd(cel: string, start: number): number {
  const quote = cel[start] ?? '';
  const raw = /[rR]/.test(cel[start - 1] ?? '') && !/[A-Za-z0-9_]/.test(cel[start - 2] ?? '');
  const delimiter = cel.startsWith(quote.repeat(3), start) ? quote.repeat(3) : quote;
  let i = start + delimiter.length;
  while (i < cel.length) {
    if (!raw && cel[i] === '\\') i += 2;
    else if (cel.startsWith(delimiter, i)) return i + delimiter.length;
    else i++;
  }
  return cel.length;
}

/**
 * Whether `cel` needs parentheses to be one operand of `||`: only the conditional `a ? b : c` binds
 * more loosely than `||`, so an expression with a `?` outside its string literals gets them (an
 * optional selection `.?f` gets them too, needlessly but harmlessly).
 */
export function needsParenthesesInOr(cel: string): boolean {
  let i = 0;
  while (i < cel.length) {
    const c = cel[i];
    if (c === '?') return true;
    i = c === "'" || c === '"' ? stringEnd(cel, i) : i + 1;
  }
  return false;
}
