/**
 * @marcbachmann/cel-js parse/check errors -> cel-go issue text (`ERROR: <input>:1:15: found no matching overload
 * for '_==_' applied to '(int, string)'` plus the source snippet and caret), located where cel-go locates them:
 * operators at the operator token, calls at '(', selections at '.', identifiers at their start.
 * Sources: github.com/google/cel-go@v0.29.2/common/error.go (ToDisplayString), checker/errors.go, parser/parser.go.
 */

import { presenceTestCall } from './presence-tests.ts';
import { OVERRIDDEN_STRING_FUNCTIONS } from './string-overrides.ts';

interface ErrorNode {
  op?: string;
  args?: unknown;
  pos?: number;
  start?: number;
  end?: number;
  input?: string;
  checkedType?: { name?: string };
}

/** The subset of a @marcbachmann/cel-js error the translation reads. */
export interface LibraryError {
  name?: string;
  code?: string;
  summary?: string;
  message: string;
  node?: ErrorNode;
  range?: { start: number; end: number };
}

/** cel-go's names of the operators (its overload and error texts use them). */
export const OPERATOR_NAMES: Readonly<Record<string, string>> = {
  '==': '_==_',
  '!=': '_!=_',
  '<': '_<_',
  '<=': '_<=_',
  '>': '_>_',
  '>=': '_>=_',
  '+': '_+_',
  '-': '_-_',
  '*': '_*_',
  '/': '_/_',
  '%': '_%_',
  in: '@in',
  '!': '!_',
  '[]': '_[_]',
};

const RENAMED_BACK = new Map([...OVERRIDDEN_STRING_FUNCTIONS].map(([from, to]) => [to, from]));

/** marc type names -> cel-go's FormatCELType. */
export function celGoTypeName(t: string): string {
  // checker.FormatCELType names the two well-known types by their CEL kinds.
  let s = t
    .trim()
    .replaceAll('google.protobuf.Duration', 'duration')
    .replaceAll('google.protobuf.Timestamp', 'timestamp');
  s = s.replace(/\b(list|map|optional)<([^<>]*)>/g, (_m, kind: string, inner: string) => {
    const k = kind === 'optional' ? 'optional_type' : kind;
    return `${k}(${inner})`;
  });
  while (/\b(list|map|optional)<([^<>]*)>/.test(s)) s = celGoTypeName(s);
  return s;
}

function lineCol(input: string, offset: number): { line: number; col: number; text: string } {
  const before = input.slice(0, offset);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const lineEnd = input.indexOf('\n', lineStart);
  return {
    line,
    col: Array.from(input.slice(lineStart, offset)).length,
    text: input.slice(lineStart, lineEnd < 0 ? undefined : lineEnd),
  };
}

/** common.Error.ToDisplayString for one issue. */
export function displayIssue(input: string, offset: number, message: string): string {
  const { line, col, text } = lineCol(input, offset);
  const snippet = text.replace(/\t/g, ' ');
  let dots = '';
  const chars = Array.from(snippet);
  for (let i = 0; i < col && i < chars.length; i++)
    dots += (chars[i] ?? '').length > 1 || (chars[i]?.codePointAt(0) ?? 0) > 0x7f ? '\uff0e' : '.';
  const caretChar = chars[col];
  const caret = caretChar !== undefined && (caretChar.codePointAt(0) ?? 0) > 0x7f ? '\uff3e' : '^';
  return `ERROR: <input>:${line}:${col + 1}: ${message}\n | ${snippet}\n | ${dots}${caret}`;
}

/** The offset of `token` in input between from and to, skipping nothing but searching forward. */
function find(input: string, token: string, from: number, to = input.length): number {
  const i = input.slice(from, to).indexOf(token);
  return i < 0 ? from : from + i;
}

function childRange(x: unknown): { start: number; end: number } | undefined {
  if (x && typeof x === 'object' && 'start' in x && 'end' in x) return x as { start: number; end: number };
  return undefined;
}

/** Where cel-go would locate an error on this node. */
/** The code of an error our library code raises with cel-go's text: shown as it is, at the node cel-go reports. */
export const CEL_GO_ISSUE = 'cel_go_issue';

function celGoOffset(node: ErrorNode, input: string): number {
  const call = presenceTestCall(node);
  if (call) return celGoOffset(call as ErrorNode, input);
  const start = node.start ?? node.pos ?? 0;
  const args = node.args;
  switch (node.op) {
    case '.':
    case '.?': {
      const operand = Array.isArray(args) ? childRange(args[0]) : undefined;
      return find(input, '.', operand?.end ?? start);
    }
    case '[]':
    case '[?]': {
      const operand = Array.isArray(args) ? childRange(args[0]) : undefined;
      return find(input, '[', operand?.end ?? start);
    }
    case 'call':
      return find(input, '(', start);
    case 'rcall': {
      const receiver = Array.isArray(args) ? childRange(args[1]) : undefined;
      const name = Array.isArray(args) ? String(args[0]) : '';
      const at = find(input, name, receiver?.end ?? start);
      return find(input, '(', at);
    }
    case '!_':
    case '-_':
      return start;
    default: {
      if (node.op && OPERATOR_NAMES[node.op] !== undefined && Array.isArray(args)) {
        const l = childRange(args[0]);
        const r = childRange(args[1]);
        return find(input, node.op, l?.end ?? start, r?.start);
      }
      return start;
    }
  }
}

/** The library names a method's receiver by its kind alone (`optional`, `list`); cel-go by its whole type. */
function withReceiverType(summary: string, node: ErrorNode): string {
  const receiver = node.op === 'rcall' && Array.isArray(node.args) ? (node.args[1] as ErrorNode) : undefined;
  const name = receiver?.checkedType?.name;
  const method = Array.isArray(node.args) ? String(node.args[0]) : '';
  const prefix = "found no matching overload for '";
  const at = summary.lastIndexOf(`.${method}(`);
  if (name === undefined || /Namespace$/.test(name) || !summary.startsWith(prefix) || at < 0) return summary;
  return `${prefix}${name}${summary.slice(at)}`;
}

function overloadMessage(summary: string): string | undefined {
  let m = /^no such overload: (.+) (==|!=|<=|>=|<|>|\+|-|\*|\/|%|in) (.+)$/.exec(summary);
  if (m)
    return `found no matching overload for '${OPERATOR_NAMES[m[2] ?? '']}' applied to '(${celGoTypeName(m[1] ?? '')}, ${celGoTypeName(m[3] ?? '')})'`;
  m = /^no such overload: ([!-])(.+)$/.exec(summary);
  if (m)
    return `found no matching overload for '${m[1] === '!' ? '!_' : '-_'}' applied to '(${celGoTypeName(m[2] ?? '')})'`;
  m = /^found no matching overload for '(?:(.+)\.)?(\w+)\((.*)\)'$/.exec(summary);
  if (m) {
    const name = RENAMED_BACK.get(m[2] ?? '') ?? m[2];
    const args = (m[3] ?? '')
      .split(/,\s*(?![^<]*>)/)
      .filter((x) => x !== '')
      .map(celGoTypeName)
      .join(', ');
    // Library namespaces are receiver objects here; cel-go names the function qualified (sets.contains).
    const namespace = m[1] !== undefined ? /^(\w+)Namespace$/.exec(m[1])?.[1] : undefined;
    if (namespace !== undefined) {
      return `found no matching overload for '${namespace.toLowerCase()}.${name}' applied to '(${args})'`;
    }
    return m[1] !== undefined
      ? `found no matching overload for '${name}' applied to '${celGoTypeName(m[1])}.(${args})'`
      : `found no matching overload for '${name}' applied to '(${args})'`;
  }
  return undefined;
}

const TOKEN_TEXT: Record<string, string> = {
  EOF: '<EOF>',
  PLUS: '+',
  MINUS: '-',
  MULTIPLY: '*',
  DIVIDE: '/',
  MODULO: '%',
  EQ: '==',
  NE: '!=',
  LT: '<',
  LE: '<=',
  GT: '>',
  GE: '>=',
  AND: '&&',
  OR: '||',
  NOT: '!',
  IN: 'in',
  LPAREN: '(',
  RPAREN: ')',
  LBRACKET: '[',
  RBRACKET: ']',
  LBRACE: '{',
  RBRACE: '}',
  DOT: '.',
  COMMA: ',',
  COLON: ':',
  QUESTION: '?',
};

/** What the CEL grammar (ANTLR) expects where an expression starts. */
const EXPRESSION_START =
  "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

/**
 * ANTLR's wording for the common syntax errors (cel-go parser), from @marcbachmann/cel-js parse errors.
 * Returns one or more issues; falls back to the library's text.
 */
function syntaxIssues(summary: string, input: string, offset: number): string[] {
  let m = /^Unexpected token: (\w+)$/.exec(summary);
  if (m) {
    const tok = TOKEN_TEXT[m[1] ?? ''] ?? m[1];
    if (m[1] === 'EOF')
      return [displayIssue(input, offset, `Syntax error: mismatched input '<EOF>' expecting ${EXPRESSION_START}`)];
    return [displayIssue(input, offset, `Syntax error: extraneous input '${tok}' expecting ${EXPRESSION_START}`)];
  }
  m = /^Expected (\w+), got (\w+)$/.exec(summary);
  if (m) {
    if (m[1] === 'IDENTIFIER' && m[2] === 'DOT') {
      return [
        displayIssue(
          input,
          offset,
          `Syntax error: no viable alternative at input '${input.slice(Math.max(0, offset - 1), offset + 1)}'`,
        ),
      ];
    }
    const want = TOKEN_TEXT[m[1] ?? ''] ?? m[1];
    const got = TOKEN_TEXT[m[2] ?? ''] ?? m[2];
    return [displayIssue(input, offset, `Syntax error: missing '${want}' at '${got}'`)];
  }
  if (summary === 'Unterminated string') {
    return [
      displayIssue(input, offset, `Syntax error: token recognition error at: '${input.slice(offset)}'`),
      displayIssue(input, input.length, `Syntax error: mismatched input '<EOF>' expecting ${EXPRESSION_START}`),
    ];
  }
  return [displayIssue(input, offset, `Syntax error: ${summary}`)];
}

/** cel-go declares or/orValue as overloads of optional_type(T), checked at the call's '('. */
function optionalArgumentIssue(summary: string, node: ErrorNode, input: string): string | undefined {
  const m = /^optional\.(or|orValue)\(\w+\) argument must be compatible type, got '(.+)' and '(.+)'$/.exec(summary);
  if (!m) return undefined;
  const receiver = m[1] === 'orValue' ? `optional<${m[2]}>` : (m[2] ?? '');
  const at = input.lastIndexOf('(', node.start ?? 0);
  const types = `${celGoTypeName(receiver)}.(${celGoTypeName(m[3] ?? '')})`;
  return displayIssue(input, Math.max(at, 0), `found no matching overload for '${m[1]}' applied to '${types}'`);
}

/** cel-go checks each operand of && and || against bool, at the operand. */
function logicalOperandIssues(node: ErrorNode, input: string): string {
  const operands = Array.isArray(node.args) ? (node.args as ErrorNode[]) : [];
  return operands
    .filter((o) => !['bool', 'dyn', undefined].includes(o.checkedType?.name))
    .map((o) =>
      displayIssue(
        input,
        celGoOffset(o, input),
        `expected type 'bool' but found '${celGoTypeName(o.checkedType?.name ?? '')}'`,
      ),
    )
    .join('\n');
}

/** The cel-go issue text for a library error raised while parsing or checking `input`. */
export function toCelGoIssue(error: LibraryError, input: string): string {
  const node = error.node ?? {};
  const summary = error.summary ?? error.message.split('\n')[0] ?? '';
  const offset = celGoOffset(node, input);
  const ternary = /^Ternary branches must have the same type, got '(.+)' and '(.+)'$/.exec(summary);
  if (ternary) {
    // cel-go checks _?_:_ as an overload, at the position of its '?'.
    let at = offset;
    for (let i = offset; i < input.length; i++) {
      if (input[i] === '?' && !/[.[]\s*$/.test(input.slice(offset, i))) {
        at = i;
        break;
      }
    }
    const types = `(bool, ${celGoTypeName(ternary[1] ?? '')}, ${celGoTypeName(ternary[2] ?? '')})`;
    return displayIssue(input, at, `found no matching overload for '_?_:_' applied to '${types}'`);
  }
  switch (error.code) {
    case CEL_GO_ISSUE:
      return displayIssue(input, offset, summary);
    case 'no_such_overload':
    case 'no_matching_overload':
      return displayIssue(input, offset, overloadMessage(withReceiverType(summary, node)) ?? summary);
    case 'no_such_key': {
      const field = /^No such key: (.*)$/.exec(summary)?.[1] ?? '';
      return displayIssue(input, offset, `undefined field '${field}'`);
    }
    case 'unknown_variable': {
      const name = /^Unknown variable: (.*)$/.exec(summary)?.[1] ?? '';
      const first = displayIssue(input, offset, `undeclared reference to '${name}' (in container '')`);
      // `ns.f(x)` of a library the environment lacks: cel-go also reports the function, at its call.
      const call = /^\s*\.\s*([A-Za-z_]\w*)\s*\(/.exec(input.slice(offset + name.length));
      if (!input.startsWith(name, offset) || !call?.[1]) return first;
      const paren = offset + name.length + call[0].length - 1;
      return `${first}\n${displayIssue(input, paren, `undeclared reference to '${call[1]}' (in container '')`)}`;
    }
    case 'invalid_macro_argument':
      // cel-go's parser (MakeHas) refuses any has() argument that is not a field selection
      if (summary === 'has() invalid argument') return displayIssue(input, offset, 'invalid argument to has() macro');
      return displayIssue(input, offset, summary);
    case 'incompatible_argument_type':
      return optionalArgumentIssue(summary, node, input) ?? displayIssue(input, offset, summary);
    case 'invalid_logical_operand':
      return logicalOperandIssues(node, input);
    case 'cannot_index_type': {
      const type = /'(.*)'/.exec(summary)?.[1] ?? '';
      if (node.op === '.' || node.op === '.?')
        return displayIssue(input, offset, `type '${celGoTypeName(type)}' does not support field selection`);
      return displayIssue(input, offset, summary);
    }
    case 'heterogeneous_list_element':
    case 'heterogeneous_map_key':
    case 'heterogeneous_map_value': {
      const m = /expected type '(.*)' but found '(.*)'/.exec(summary);
      return displayIssue(
        input,
        node.start ?? offset,
        m ? `expected type '${celGoTypeName(m[1] ?? '')}' but found '${celGoTypeName(m[2] ?? '')}'` : summary,
      );
    }
    default:
      if (error.name === 'ParseError')
        return syntaxIssues(summary, input, node.start ?? error.range?.start ?? 0).join('\n');
      return displayIssue(input, offset, summary);
  }
}

/** The line and column of one displayed issue, the order cel-go's Errors.ToDisplayString sorts them in. */
function issueLocation(issue: string): [number, number] {
  const m = /^ERROR: <input>:(\d+):(\d+):/.exec(issue);
  return [Number(m?.[1] ?? 0), Number(m?.[2] ?? 0)];
}

/** Every error of one check, as cel-go displays them: sorted by line and column (stably), one per line. */
export function toCelGoIssues(errors: readonly LibraryError[], input: string): string {
  // `ns.f(x)` of a namespace the environment lacks is reported with the namespace (see unknown_variable).
  const undeclared = new Set(errors.filter((e) => e.code === 'unknown_variable').map((e) => e.node));
  const reported = errors.filter(
    (e) => !(e.node?.op === 'rcall' && Array.isArray(e.node.args) && undeclared.has(e.node.args[1] as ErrorNode)),
  );
  const issues = reported.flatMap((e) => toCelGoIssue(e, input).split(/\n(?=ERROR: <input>:)/));
  const located = issues.map((text, i) => ({ text, i, at: issueLocation(text) }));
  located.sort((a, b) => a.at[0] - b.at[0] || a.at[1] - b.at[1] || a.i - b.i);
  return located.map((l) => l.text).join('\n');
}
