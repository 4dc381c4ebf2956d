/**
 * go-yaml v2, kubectl's YAML reader, never looks at the indentation of the lines that continue a flow collection
 * (`[a,` / `b]`), a quoted scalar or a plain scalar inside a flow collection: yaml_parser_unroll_indent does nothing
 * in the flow context, yaml_parser_scan_flow_scalar never compares columns, and whitespace between the tokens of a
 * flow collection may hold tabs (go.yaml.in/yaml/v2@v2.4.4 scannerc.go). js-yaml reads YAML 1.2, which wants those
 * lines indented past the enclosing block collection, and refuses them with "deficient indentation". Leading
 * whitespace there is no content in either reader, so the line js-yaml stops at gets more indentation (or the tabs
 * it stopped after become spaces) and the text is read again: only texts js-yaml refuses pay for the second read.
 */
import { type LoadOptions, loadAll, YAMLException } from 'js-yaml';

const DEFICIENT = 'deficient indentation';

/**
 * `---` or `...` at the start of a line followed by a blank or the end: go-yaml ends a quoted scalar or flow
 * collection there with an error rather than reading it as content.
 */
const DOCUMENT_INDICATOR = /^(?:---|\.\.\.)(?:[ \t\r\n]|$)/;

interface Mark {
  position: number;
}

/** The start of the line holding `position`. */
function lineStart(text: string, position: number): number {
  return text.lastIndexOf('\n', position - 1) + 1;
}

/** The start of the last line before `start` with anything but whitespace on it, or -1. */
function previousContentLine(text: string, start: number): number {
  let end = start - 1;
  while (end > 0) {
    const begin = lineStart(text, end);
    if (text.slice(begin, end).trim() !== '') return begin;
    end = begin - 1;
  }
  return -1;
}

/**
 * The offset of a tab after the `:` of a key on the same line (`key:\t[a,`), which go-yaml takes as whitespace and
 * js-yaml holds against a flow collection that starts on that line and continues on the next.
 */
function keyTab(line: string): number | undefined {
  const m = /^([ ]*[^ \t:][^\t]*?:[ ]*)\t/.exec(line);
  return m ? (m[1] as string).length : undefined;
}

/** The width a relieved line was given, and where that line starts. */
interface Relief {
  lineStart: number;
  width: number;
}

/**
 * The text with the whitespace js-yaml refused at `mark` made acceptable, or a reason to refuse the text as
 * go-yaml does. A line's indentation becomes at least as wide as the previous non-blank line: a flow or quoted
 * node opened on that line or was already continued on it, so the block collection around the node is less
 * indented than that. Inside one node the block collection around it stays the same, so a line right after a
 * relieved one gets the same width (widths do not grow line after line).
 */
function relieve(
  text: string,
  mark: Mark,
  last: Relief | undefined,
): { text: string; relief?: Relief } | { refusal: string } {
  const start = lineStart(text, mark.position);
  let wsStart = mark.position;
  while (wsStart > start && (text[wsStart - 1] === ' ' || text[wsStart - 1] === '\t')) wsStart--;
  if (wsStart > start) {
    const run = text.slice(wsStart, mark.position);
    if (run.includes('\t'))
      return { text: text.slice(0, wsStart) + run.replaceAll('\t', ' ') + text.slice(mark.position) };
    const afterKey = keyTab(text.slice(start, mark.position));
    if (afterKey === undefined) return { refusal: DEFICIENT };
    return { text: `${text.slice(0, start + afterKey)} ${text.slice(start + afterKey + 1)}` };
  }
  let indentEnd = start;
  while (text[indentEnd] === ' ' || text[indentEnd] === '\t') indentEnd++;
  if (indentEnd === start && DOCUMENT_INDICATOR.test(text.slice(start, start + 4)))
    return { refusal: 'found unexpected document indicator' };
  const previous = previousContentLine(text, start);
  const previousLength = previous < 0 ? 0 : text.slice(previous, start).trimEnd().length;
  const known = last !== undefined && last.lineStart === previous ? last.width : previousLength;
  const width = Math.max(indentEnd - start, known, 1);
  return {
    text: text.slice(0, start) + ' '.repeat(width) + text.slice(indentEnd),
    relief: { lineStart: start, width },
  };
}

/** A refusal with js-yaml's mark and go-yaml's reason. */
function refusal(error: YAMLException, reason: string): YAMLException {
  return new YAMLException(reason, error.mark);
}

/**
 * loadAll, reading flow collections and quoted scalars with go-yaml v2's indentation leniency; with the values,
 * the text js-yaml read (the same lines, some of them indented more).
 */
export function loadAllAsGoYaml(text: string, options: LoadOptions): { values: unknown[]; text: string } {
  let current = text;
  let lastPosition = -1;
  let last: Relief | undefined;
  for (;;) {
    try {
      return { values: loadAll(current, options), text: current };
    } catch (error) {
      if (!(error instanceof YAMLException) || error.reason !== DEFICIENT || !error.mark) throw error;
      const mark: Mark = error.mark;
      // Each relief widens the line js-yaml stopped at; stopping there again means the width did not help.
      if (mark.position === lastPosition) throw error;
      lastPosition = mark.position;
      const relieved = relieve(current, mark, last);
      if ('refusal' in relieved) throw refusal(error, relieved.refusal);
      current = relieved.text;
      last = relieved.relief ?? last;
    }
  }
}
