/**
 * Go's regexp package (RE2 syntax, linear-time matching) for the patterns a CRD brings: OpenAPI
 * `pattern` and CEL's `matches`, `find`, `findAll`. Matching runs on re2js, a port of Go's
 * regexp/syntax and of RE2's automata, so every pattern matches in time linear in the input and
 * refuses what Go refuses (lookaround, backreferences, `\C`, repeat counts over 1000) with Go's
 * error text. V8's backtracking engine is used only for the few patterns listed in KNOWN_SAFE,
 * anchored patterns whose every repetition is delimited by a character the repeated part cannot
 * match, measured linear on adversarial input (test/unit/go-regexp.test.ts); see docs/engine.md.
 */
import { RE2JS } from 're2js';

/** A Go regexp that does not compile: the message is Go's (`error parsing regexp: ...`). */
export class GoRegexpError extends Error {
  override name = 'GoRegexpError';
}

export interface GoRegexp {
  /** The pattern as written. */
  readonly source: string;
  /** regexp.MatchString: a match anywhere in `s`. */
  test(s: string): boolean;
  /** regexp.FindString: the leftmost match, or undefined when there is none. */
  find(s: string): string | undefined;
  /** regexp.FindAllString(s, limit): successive non-overlapping matches; limit < 0 means all. */
  findAll(s: string, limit: number): string[];
}

/**
 * Patterns Kubernetes and Gateway API use, with a V8 RegExp that matches exactly the same strings
 * (test/unit/go-regexp.test.ts holds each to re2js on generated strings).
 */
const KNOWN_SAFE: ReadonlyMap<string, RegExp> = new Map([
  // DNS-1123 label and subdomain (apimachinery validation.go), the CEL hostname rule of StaticSite.
  ['^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/],
  [
    '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
    /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/,
  ],
  // metav1.Condition reason and type (the status schema of every CRD built with conditions).
  ['^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$', /^[A-Za-z](?:[A-Za-z0-9_,:]*[A-Za-z0-9_])?$/],
  [
    '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    /^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\/)?(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/,
  ],
  // Gateway API (v1.x): Group (empty or a subdomain), Kind, Hostname, HTTP header name, and the path
  // characters its HTTPRoute rules check with matches(). Met by nearly every route, so a route is
  // validated without the first re2js compile's warm-up.
  [
    '^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
    /^$|^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/,
  ],
  ['^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$', /^[a-zA-Z](?:[-a-zA-Z0-9]*[a-zA-Z0-9])?$/],
  [
    '^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
    /^(?:\*\.)?[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/,
  ],
  ["^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$", /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/],
  ["^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$", /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|%[0-9a-fA-F]{2})+$/],
]);

/** The patterns whose matching runs on V8 rather than on the linear-time engine. */
export const KNOWN_SAFE_PATTERNS: readonly string[] = [...KNOWN_SAFE.keys()];

/** A KNOWN_SAFE pattern matched by V8. Each is anchored at both ends: at most one match. */
function v8Regexp(source: string, re: RegExp): GoRegexp {
  const find = (s: string) => re.exec(s)?.[0];
  return {
    source,
    test: (s) => re.test(s),
    find,
    findAll(s, limit) {
      const m = limit === 0 ? undefined : find(s);
      return m === undefined ? [] : [m];
    },
  };
}

class Re2Regexp implements GoRegexp {
  readonly source: string;
  private readonly re: RE2JS;
  constructor(source: string, re: RE2JS) {
    this.source = source;
    this.re = re;
  }
  test(s: string): boolean {
    return this.re.matcher(s).find();
  }
  find(s: string): string | undefined {
    const m = this.re.matcher(s);
    return m.find() ? (m.group() ?? '') : undefined;
  }
  findAll(s: string, limit: number): string[] {
    // Go's Regexp.allMatches: after an empty match, move one character on; an empty match right
    // where the previous match ended is skipped.
    const out: string[] = [];
    const m = this.re.matcher(s);
    let position = 0;
    let previousEnd = -1;
    while ((limit < 0 || out.length < limit) && position <= s.length && m.find(position)) {
      const start = m.start();
      const end = m.end();
      let accept = true;
      if (end === position) {
        if (start === previousEnd) accept = false;
        position += position < s.length ? codeUnitsAt(s, position) : 1;
      } else {
        position = end;
      }
      previousEnd = end;
      if (accept) out.push(m.group() ?? '');
    }
    return out;
  }
}

function codeUnitsAt(s: string, i: number): number {
  return (s.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
}

/**
 * The pattern with its named groups made plain groups. Go's regexp accepts a capture name used twice
 * (test/fixtures/regexp/go-results.json), re2js refuses it, and nothing here reads groups by name.
 */
function withoutGroupNames(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      out += pattern.slice(i, i + 2);
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
      out += c;
    } else if (c === '[') {
      inClass = true;
      out += c;
      if (pattern[i + 1] === ']' || (pattern[i + 1] === '^' && pattern[i + 2] === ']')) {
        const skip = pattern[i + 1] === '^' ? 2 : 1;
        out += pattern.slice(i + 1, i + 1 + skip);
        i += skip;
      }
    } else if (
      c === '(' &&
      (pattern.startsWith('(?P<', i) || (pattern.startsWith('(?<', i) && !/^\(\?<[=!]/.test(pattern.slice(i))))
    ) {
      const close = pattern.indexOf('>', i);
      out += '(';
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

function compileRe2js(pattern: string, retry = true): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (retry && message.includes('duplicate capture group name'))
      return compileRe2js(withoutGroupNames(pattern), false);
    throw new GoRegexpError(message);
  }
}

/** regexp.Compile: throws GoRegexpError with Go's message when the pattern does not compile. */
export function compileGoRegexp(pattern: string): GoRegexp {
  // A KNOWN_SAFE pattern compiles in Go (a test holds re2js to that), so it skips re2js here: the
  // first compile in a process costs re2js some 15 ms of warm-up.
  const known = KNOWN_SAFE.get(pattern);
  return known ? v8Regexp(pattern, known) : new Re2Regexp(pattern, compileRe2js(pattern));
}
