/**
 * Translates a Go RE2 pattern (the syntax of `pattern` in a CRD schema) into a JavaScript RegExp with
 * the same matches. Only the differences that change a match/no-match answer are handled.
 */

const POSIX_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/** Go's \s is ASCII-only: [\t\n\f\r ]. */
const GO_SPACE = '\\t\\n\\f\\r ';
const JS_SYNTAX = new Set(['^', '$', '\\', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '/']);

function unicodeClass(name: string): string {
  const bare = name.startsWith('^') ? name.slice(1) : name;
  const negate = name.startsWith('^');
  const isCategory = /^[A-Z][a-z]?$/.test(bare);
  const body = isCategory ? bare : `Script=${bare}`;
  return negate ? `\\P{${body}}` : `\\p{${body}}`;
}

interface Translation {
  source: string;
  flags: string;
}

function translateEscape(pattern: string, i: number, inClass: boolean): { text: string; next: number } {
  const c = pattern[i + 1] ?? '';
  switch (c) {
    // Start and end of the text, whatever the flags: exact even under (?m).
    case 'A':
      return { text: '(?<![\\s\\S])', next: i + 2 };
    case 'z':
      return { text: '(?![\\s\\S])', next: i + 2 };
    case 's':
      return { text: inClass ? GO_SPACE : `[${GO_SPACE}]`, next: i + 2 };
    case 'S':
      return { text: inClass ? '\\S' : `[^${GO_SPACE}]`, next: i + 2 };
    case 'p':
    case 'P': {
      let name: string;
      let next: number;
      if (pattern[i + 2] === '{') {
        const end = pattern.indexOf('}', i + 3);
        name = pattern.slice(i + 3, end);
        next = end + 1;
      } else {
        name = pattern[i + 2] ?? '';
        next = i + 3;
      }
      const cls = unicodeClass(c === 'P' ? (name.startsWith('^') ? name.slice(1) : `^${name}`) : name);
      return { text: cls, next };
    }
    case 'x':
      if (pattern[i + 2] === '{') {
        const end = pattern.indexOf('}', i + 3);
        return { text: `\\u{${pattern.slice(i + 3, end)}}`, next: end + 1 };
      }
      return { text: pattern.slice(i, i + 4), next: i + 4 };
    case 'Q': {
      const end = pattern.indexOf('\\E', i + 2);
      const literal = end < 0 ? pattern.slice(i + 2) : pattern.slice(i + 2, end);
      return { text: literal.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&'), next: end < 0 ? pattern.length : end + 2 };
    }
    default:
      if (/[A-Za-z0-9]/.test(c)) return { text: `\\${c}`, next: i + 2 };
      if (JS_SYNTAX.has(c) || (inClass && c === '-')) return { text: `\\${c}`, next: i + 2 };
      // Go lets any punctuation be escaped; JavaScript's unicode mode does not.
      return { text: `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`, next: i + 1 + c.length };
  }
}

function translate(pattern: string): Translation {
  let flags = '';
  let i = 0;
  const leading = /^\(\?([imsU]+)\)/.exec(pattern);
  if (leading) {
    if (leading[1]?.includes('i')) flags += 'i';
    if (leading[1]?.includes('s')) flags += 's';
    if (leading[1]?.includes('m')) flags += 'm';
    i = leading[0].length;
  }
  let out = '';
  let inClass = false;
  while (i < pattern.length) {
    const ch = pattern[i] ?? '';
    if (ch === '\\') {
      const { text, next } = translateEscape(pattern, i, inClass);
      out += text;
      i = next;
      continue;
    }
    if (inClass) {
      if (ch === '[' && pattern[i + 1] === ':') {
        const end = pattern.indexOf(':]', i + 2);
        const name = pattern.slice(i + 2, end);
        const negated = name.startsWith('^');
        const cls = POSIX_CLASSES[negated ? name.slice(1) : name];
        if (end > 0 && cls !== undefined && !negated) {
          out += cls;
          i = end + 2;
          continue;
        }
      }
      if (ch === ']') inClass = false;
      out += ch === '[' ? '\\[' : ch;
      i++;
      continue;
    }
    const negatedPosix = ch === '[' ? /^\[\[:\^([a-z]+):\]\]/.exec(pattern.slice(i)) : null;
    if (negatedPosix && POSIX_CLASSES[negatedPosix[1] ?? ''] !== undefined) {
      // A class that is only a negated POSIX class, `[[:^alpha:]]`, is `[^A-Za-z]`.
      out += `[^${POSIX_CLASSES[negatedPosix[1] ?? '']}]`;
      i += negatedPosix[0].length;
      continue;
    }
    if (ch === '[') {
      inClass = true;
      out += '[';
      i++;
      if (pattern[i] === '^') {
        out += '^';
        i++;
      }
      if (pattern[i] === ']') {
        out += '\\]';
        i++;
      }
      continue;
    }
    if (ch === '(' && pattern.startsWith('(?P<', i)) {
      out += '(?<';
      i += 4;
      continue;
    }
    if (ch === '{') {
      const quantifier = /^\{\d+(,\d*)?\}/.exec(pattern.slice(i));
      if (quantifier) {
        out += quantifier[0];
        i += quantifier[0].length;
      } else {
        out += '\\{';
        i++;
      }
      continue;
    }
    if (ch === '}') {
      out += '\\}';
      i++;
      continue;
    }
    out += ch;
    i += ch.length;
  }
  return { source: out, flags };
}

/** A RegExp matching what Go's regexp.MustCompile(pattern).MatchString matches. */
export function compileGoRegexp(pattern: string): RegExp {
  const { source, flags } = translate(pattern);
  try {
    return new RegExp(source, `${flags}u`);
  } catch {
    return new RegExp(source, flags);
  }
}
