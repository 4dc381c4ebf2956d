/**
 * net/mail.ParseAddress from Go succeeds with a non-empty address: the check behind the `email`
 * format. Covers addr-spec, "Name <addr-spec>" and quoted strings; comments are skipped.
 */

const ATEXT = /[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]/;

class AddressParser {
  private s: string;

  constructor(s: string) {
    this.s = s;
  }

  empty(): boolean {
    return this.s.length === 0;
  }

  peek(): string {
    return this.s[0] ?? '';
  }

  consume(c: string): boolean {
    if (this.s[0] !== c) return false;
    this.s = this.s.slice(1);
    return true;
  }

  skipSpace(): void {
    this.s = this.s.replace(/^[ \t]+/, '');
  }

  /** skipCFWS: whitespace and (nested) comments; false on an unterminated comment. */
  skipCfws(): boolean {
    this.skipSpace();
    while (this.s.startsWith('(')) {
      let depth = 0;
      let i = 0;
      for (; i < this.s.length; i++) {
        const c = this.s[i];
        if (c === '\\') i++;
        else if (c === '(') depth++;
        else if (c === ')' && --depth === 0) break;
      }
      if (depth !== 0) return false;
      this.s = this.s.slice(i + 1);
      this.skipSpace();
    }
    return true;
  }

  atom(dot: boolean, permissive: boolean): string | undefined {
    let i = 0;
    for (const ch of this.s) {
      const isAtext = ch.charCodeAt(0) >= 0x80 || ATEXT.test(ch) || (dot && ch === '.');
      if (!isAtext) break;
      i += ch.length;
    }
    if (i === 0) return undefined;
    const atom = this.s.slice(0, i);
    if (!permissive && (atom.startsWith('.') || atom.includes('..') || atom.endsWith('.'))) return undefined;
    this.s = this.s.slice(i);
    return atom;
  }

  quotedString(): string | undefined {
    let i = 1;
    let out = '';
    while (i < this.s.length) {
      const c = this.s[i] ?? '';
      if (c === '"') {
        this.s = this.s.slice(i + 1);
        return out;
      }
      if (c === '\\') {
        i++;
        if (i >= this.s.length) return undefined;
        out += this.s[i];
      } else if (c === '\t' || c === ' ' || c.charCodeAt(0) > 0x20) {
        out += c;
      } else return undefined;
      i++;
    }
    return undefined;
  }

  addrSpec(): string | undefined {
    const orig = this.s;
    const fail = () => {
      this.s = orig;
      return undefined;
    };
    this.skipSpace();
    const local = this.peek() === '"' ? this.quotedString() : this.atom(true, false);
    if (local === undefined || !this.consume('@')) return fail();
    this.skipSpace();
    let domain: string | undefined;
    if (this.peek() === '[') {
      const close = this.s.indexOf(']');
      if (close < 0 || /[[\\]/.test(this.s.slice(1, close))) return fail();
      domain = this.s.slice(0, close + 1);
      this.s = this.s.slice(close + 1);
    } else domain = this.atom(true, false);
    if (domain === undefined) return fail();
    return `${local}@${domain}`;
  }

  phrase(): boolean {
    let words = 0;
    for (;;) {
      if (words > 0 && !this.skipCfws()) return false;
      this.skipSpace();
      const word = this.peek() === '"' ? this.quotedString() : this.atom(true, true);
      if (word === undefined) break;
      words++;
    }
    return words > 0;
  }

  address(): string | undefined {
    this.skipSpace();
    const spec = this.addrSpec();
    if (spec !== undefined) {
      this.skipSpace();
      if (!this.empty() && this.peek() === '(' && !this.skipCfws()) return undefined;
      return spec;
    }
    if (this.peek() !== '<' && !this.phrase()) return undefined;
    this.skipSpace();
    if (!this.consume('<')) return undefined;
    const inner = this.addrSpec();
    if (inner === undefined || !this.consume('>')) return undefined;
    return inner;
  }
}

export function isEmail(s: string): boolean {
  const parser = new AddressParser(s);
  const address = parser.address();
  if (address === undefined || address === '') return false;
  return parser.skipCfws() && parser.empty();
}
