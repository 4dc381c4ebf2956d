/**
 * Tabs go-yaml v2 (kubectl's YAML reader) refuses in the block context, where js-yaml reads them as whitespace.
 * go-yaml's scanner (go.yaml.in/yaml/v2@v2.4.4 scannerc.go) eats a tab between tokens only while no simple key may
 * start (yaml_parser_scan_to_next_token): at the start of a line, after `-`, after `?` and after the `:` of an
 * explicit key a tab is "found character that cannot start any token"; a plain scalar's scan of the whitespace
 * after it refuses a tab left of its block's indentation ("found a tab character that violates indentation"); a
 * block scalar refuses a tab where its indentation spaces go ("found a tab character where an indentation space is
 * expected"). Quoted scalars, flow collections and comments take tabs. The text checked is one js-yaml has read:
 * its events give where each scalar and flow collection lies, and only the whitespace between them is scanned.
 */
import { parseEvents } from 'js-yaml';

/** A tab go-yaml refuses: its offset in the text and go-yaml's reason. */
export interface TabRefusal {
  position: number;
  reason: string;
}

type Event = ReturnType<typeof parseEvents>[number];

const SEQUENCE = 2;
const MAPPING = 3;
const SCALAR = 4;
const ALIAS = 5;
const POP = 6;
const PLAIN = 1;
const LITERAL = 4;
const FOLDED = 5;
const FLOW = 2;

const CANNOT_START = 'found character that cannot start any token';
const VIOLATES = 'found a tab character that violates indentation';
const INDENTATION_SPACE = 'found a tab character where an indentation space is expected';

/** What lies between the gaps: its extent and what go-yaml's scanner does at it. */
interface Token {
  start: number;
  end: number;
  kind: 'plain' | 'block' | 'other';
  /** For plain scalars: the column a continuation must reach (the block collection's column + 1). */
  indent: number;
  /** For block scalars: the content's indentation, when js-yaml found content. */
  contentIndent: number;
}

const columnOf = (text: string, position: number) => position - (text.lastIndexOf('\n', position - 1) + 1);
const isBreak = (c: string | undefined) => c === '\n' || c === '\r';
const isBlankOrEnd = (c: string | undefined) => c === undefined || c === ' ' || c === '\t' || isBreak(c);

/** The offset of the bracket closing a flow collection whose last item ends at `from`. */
function flowEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === ']' || c === '}') return i + 1;
    if (c === '#' && (i === 0 || /\s/.test(text[i - 1] as string))) while (i < text.length && !isBreak(text[i])) i++;
  }
  return text.length;
}

/** The tokens of the block context, in order: scalars, flow collections, anchors, tags and aliases. */
function blockTokens(text: string, events: Event[]): Token[] {
  const tokens: Token[] = [];
  const blockColumns: number[] = [];
  let flowDepth = 0;
  let flowStart = 0;
  let lastEnd = 0;
  const add = (start: number, end: number, more: Partial<Token> = {}) => {
    if (flowDepth === 0) tokens.push({ start, end, kind: 'other', indent: 0, contentIndent: -1, ...more });
  };
  const properties = (e: { anchorStart: number; anchorEnd: number; tagStart: number; tagEnd: number }) => {
    if (e.anchorStart >= 0) add(e.anchorStart - 1, e.anchorEnd);
    if (e.tagStart >= 0) add(e.tagStart, e.tagEnd);
  };
  const opened: Array<'block' | 'flow'> = [];
  for (const e of events) {
    if (e.type === SEQUENCE || e.type === MAPPING) {
      properties(e);
      if (e.style === FLOW) {
        if (flowDepth === 0) flowStart = e.start;
        flowDepth++;
        lastEnd = e.start + 1;
        opened.push('flow');
      } else {
        blockColumns.push(columnOf(text, e.start));
        opened.push('block');
      }
    } else if (e.type === POP) {
      const kind = opened.pop();
      if (kind === 'flow') {
        lastEnd = flowEnd(text, lastEnd);
        flowDepth--;
        add(flowStart, lastEnd);
      } else if (kind === 'block') blockColumns.pop();
    } else if (e.type === SCALAR) {
      properties(e);
      const quoted = e.style !== PLAIN && e.style !== LITERAL && e.style !== FOLDED;
      const start = quoted ? e.valueStart - 1 : e.valueStart;
      lastEnd = quoted ? e.valueEnd + 1 : e.valueEnd;
      const indent = (blockColumns.at(-1) ?? -1) + 1;
      if (e.style === PLAIN) add(start, lastEnd, { kind: 'plain', indent });
      else if (e.style === LITERAL || e.style === FOLDED)
        add(start, lastEnd, { kind: 'block', contentIndent: e.indent });
      else add(start, lastEnd);
    } else if (e.type === ALIAS) {
      lastEnd = e.anchorEnd;
      add(e.anchorStart - 1, e.anchorEnd);
    }
  }
  return tokens.sort((a, b) => a.start - b.start);
}

/**
 * The whitespace after a plain scalar's first character, as go-yaml's plain scanner walks it: past line breaks,
 * a tab left of `indent` is refused. Returns where the next token starts and whether a line break was crossed.
 */
function afterPlain(text: string, token: Token): TabRefusal | { next: number; crossedLine: boolean } {
  let crossedLine = false;
  let i = token.start;
  for (; i < text.length; i++) {
    const c = text[i];
    if (isBreak(c)) crossedLine = true;
    else if (c === '\t') {
      if (crossedLine && columnOf(text, i) < token.indent) return { position: i, reason: VIOLATES };
    } else if (c !== ' ' && i >= token.end) break;
    else if (c !== ' ') crossedLine = false;
  }
  return { next: i, crossedLine };
}

const nextLine = (text: string, i: number) => text.indexOf('\n', i) + 1 || text.length;

/**
 * A block scalar's lines as go-yaml scans their indentation: until its first non-empty line every space is
 * indentation, after it those left of the content's column; a tab among them is refused. Returns where the next
 * token starts.
 */
function afterBlock(text: string, token: Token): TabRefusal | { next: number } {
  const indent = token.contentIndent;
  let detecting = true;
  let i = token.start;
  while (i < text.length) {
    const lineStart = i;
    while (text[i] === ' ' && (detecting || i - lineStart < indent)) i++;
    if (text[i] === '\t' && (detecting || i - lineStart < indent)) return { position: i, reason: INDENTATION_SPACE };
    if (isBreak(text[i])) {
      i = nextLine(text, i);
      continue;
    }
    if (i >= text.length || indent <= 0 || i - lineStart < indent) return { next: i };
    detecting = false;
    i = nextLine(text, i);
  }
  return { next: i };
}

/** The first tab go-yaml would refuse in a text js-yaml has read, or undefined. */
export function blockTabRefusal(text: string): TabRefusal | undefined {
  const tokens = blockTokens(text, parseEvents(text, {}));
  let simpleKeyAllowed = true;
  let lineHasToken = false;
  let i = 0;
  let t = 0;
  while (i < text.length) {
    const token = tokens[t];
    if (token && i >= token.start) {
      t++;
      if (token.kind === 'plain') {
        const after = afterPlain(text, token);
        if ('reason' in after) return after;
        i = after.next;
        simpleKeyAllowed = after.crossedLine;
        lineHasToken = !after.crossedLine;
      } else if (token.kind === 'block') {
        const after = afterBlock(text, token);
        if ('reason' in after) return after;
        i = after.next;
        simpleKeyAllowed = true;
        lineHasToken = false;
      } else {
        i = Math.max(i, token.end);
        simpleKeyAllowed = false;
        lineHasToken = true;
      }
      while (tokens[t] && (tokens[t] as Token).start < i) t++;
      continue;
    }
    const c = text[i];
    if (c === '\t') {
      if (simpleKeyAllowed) return { position: i, reason: CANNOT_START };
    } else if (isBreak(c)) {
      simpleKeyAllowed = true;
      lineHasToken = false;
    } else if (c === '#') {
      while (i + 1 < text.length && !isBreak(text[i + 1])) i++;
    } else if ((c === '-' || c === '?') && isBlankOrEnd(text[i + 1])) {
      simpleKeyAllowed = true;
    } else if (c === ':' && isBlankOrEnd(text[i + 1])) {
      // The `:` of a key on the same line ends the chance of a simple key; an explicit key's `:` starts one.
      simpleKeyAllowed = !lineHasToken;
    } else if (c === '|' || c === '>') {
      // A block scalar's header: indicators, blanks and a comment up to the line's end.
      while (i + 1 < text.length && !isBreak(text[i + 1])) i++;
    } else if (c !== ' ') {
      simpleKeyAllowed = false;
      lineHasToken = true;
    }
    i++;
  }
  return undefined;
}
