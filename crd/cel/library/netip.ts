/**
 * A small port of Go's net/netip Addr and Prefix: parsing (strict dotted-quad IPv4, IPv6 with zones and
 * embedded IPv4), RFC 5952 formatting and the address-class predicates. Source: Go src/net/netip/netip.go.
 */
import { goQuote } from '../../apimachinery/go-format.ts';

export class Addr {
  /** 4 bytes for IPv4, 16 for IPv6. */
  readonly bytes: Uint8Array;
  readonly zone: string;
  constructor(bytes: Uint8Array, zone = '') {
    this.bytes = bytes;
    this.zone = zone;
  }
  get is4(): boolean {
    return this.bytes.length === 4;
  }
  get is6(): boolean {
    return this.bytes.length === 16;
  }
  get is4In6(): boolean {
    const b = this.bytes;
    return this.is6 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
  }
  equals(other: unknown): boolean {
    return other instanceof Addr && other.toString() === this.toString();
  }
  toString(): string {
    if (this.is4) return Array.from(this.bytes).join('.');
    if (this.is4In6) return `::ffff:${Array.from(this.bytes.slice(12)).join('.')}${this.zone ? `%${this.zone}` : ''}`;
    const groups: number[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(((this.bytes[i] as number) << 8) | (this.bytes[i + 1] as number));
    let bestStart = -1;
    let bestLen = 0;
    for (let i = 0; i < 8; ) {
      if (groups[i] !== 0) {
        i++;
        continue;
      }
      let j = i;
      while (j < 8 && groups[j] === 0) j++;
      if (j - i > bestLen && j - i >= 2) {
        bestStart = i;
        bestLen = j - i;
      }
      i = j;
    }
    let out = '';
    for (let i = 0; i < 8; i++) {
      if (i === bestStart) {
        out += '::';
        i += bestLen - 1;
        continue;
      }
      if (out !== '' && !out.endsWith(':')) out += ':';
      out += (groups[i] as number).toString(16);
    }
    return out + (this.zone ? `%${this.zone}` : '');
  }
  isUnspecified(): boolean {
    return this.bytes.every((b) => b === 0);
  }
  isLoopback(): boolean {
    if (this.is4) return this.bytes[0] === 127;
    return this.bytes.slice(0, 15).every((b) => b === 0) && this.bytes[15] === 1;
  }
  isMulticast(): boolean {
    if (this.is4) return ((this.bytes[0] as number) & 0xf0) === 0xe0;
    return this.bytes[0] === 0xff;
  }
  isLinkLocalMulticast(): boolean {
    if (this.is4) return this.bytes[0] === 224 && this.bytes[1] === 0 && this.bytes[2] === 0;
    return this.bytes[0] === 0xff && this.bytes[1] === 0x02;
  }
  isLinkLocalUnicast(): boolean {
    if (this.is4) return this.bytes[0] === 169 && this.bytes[1] === 254;
    return this.bytes[0] === 0xfe && ((this.bytes[1] as number) & 0xc0) === 0x80;
  }
  isGlobalUnicast(): boolean {
    if (this.is4 && this.bytes.every((b) => b === 255)) return false;
    return !this.isUnspecified() && !this.isLoopback() && !this.isMulticast() && !this.isLinkLocalUnicast();
  }
}

function parseError(raw: string, msg: string, at?: string): Error {
  return new Error(`ParseAddr(${goQuote(raw)}): ${msg}${at !== undefined ? ` (at ${goQuote(at)})` : ''}`);
}

function parseIPv4(raw: string, s: string): Uint8Array {
  const out = new Uint8Array(4);
  let pos = 0;
  let val = 0;
  let digits = 0;
  let fieldStart = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c >= '0' && c <= '9') {
      if (digits === 1 && val === 0) throw parseError(raw, 'IPv4 field has octet with leading zero');
      val = val * 10 + Number(c);
      digits++;
      if (val > 255) throw parseError(raw, 'IPv4 field has value >255');
    } else if (c === '.') {
      if (i === 0 || i === s.length - 1 || s[i - 1] === '.')
        throw parseError(raw, 'IPv4 field must have at least one digit', s.slice(i));
      if (pos === 3) throw parseError(raw, 'IPv4 address too long');
      out[pos++] = val;
      val = 0;
      digits = 0;
      fieldStart = i + 1;
    } else {
      throw parseError(raw, 'unexpected character', s.slice(i));
    }
  }
  void fieldStart;
  if (pos < 3) throw parseError(raw, 'IPv4 address too short');
  out[3] = val;
  return out;
}

function parseIPv6(raw: string, input: string): Addr {
  let s = input;
  let zone = '';
  const pct = s.indexOf('%');
  if (pct >= 0) {
    zone = s.slice(pct + 1);
    s = s.slice(0, pct);
    if (zone === '') throw parseError(raw, 'zone must be a non-empty string');
  }
  const out = new Uint8Array(16);
  let ellipsis = -1;
  let i = 0;
  if (s.startsWith('::')) {
    ellipsis = 0;
    s = s.slice(2);
    if (s === '') return new Addr(out, zone);
  }
  while (i < 16) {
    let off = 0;
    let acc = 0;
    while (off < s.length) {
      const c = s[off] as string;
      const d = parseInt(c, 16);
      if (Number.isNaN(d) || !/[0-9a-fA-F]/.test(c)) break;
      acc = acc * 16 + d;
      off++;
      if (off > 4) throw parseError(raw, 'each group must have 4 or less digits', s);
    }
    if (off === 0) throw parseError(raw, 'each colon-separated field must have at least one digit', s);
    if (off < s.length && s[off] === '.') {
      if (ellipsis < 0 && i !== 12)
        throw parseError(raw, 'embedded IPv4 address must replace the final 2 fields of the address', s);
      if (i + 4 > 16) throw parseError(raw, 'too many hex fields to fit an embedded IPv4 at the end of the address', s);
      const v4 = parseIPv4(raw, s);
      out.set(v4, i);
      i += 4;
      s = '';
      break;
    }
    out[i] = acc >> 8;
    out[i + 1] = acc & 0xff;
    i += 2;
    s = s.slice(off);
    if (s === '') break;
    if (s[0] !== ':') throw parseError(raw, 'unexpected character, want colon', s);
    if (s.length === 1) throw parseError(raw, 'colon must be followed by more characters', s);
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) throw parseError(raw, 'multiple :: in address', s);
      ellipsis = i;
      s = s.slice(1);
      if (s === '') break;
    }
  }
  if (s !== '') throw parseError(raw, 'trailing garbage after address', s);
  if (i < 16) {
    if (ellipsis < 0) throw parseError(raw, 'address string too short');
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) out[j + n] = out[j] as number;
    out.fill(0, ellipsis, ellipsis + n);
  } else if (ellipsis >= 0) {
    throw parseError(raw, 'the :: must expand to at least one field of zeros');
  }
  return new Addr(out, zone);
}

export function parseAddr(raw: string): Addr {
  if (raw === '') throw parseError(raw, 'unable to parse IP');
  for (const c of raw) {
    if (c === '.') return new Addr(parseIPv4(raw, raw));
    if (c === ':') return parseIPv6(raw, raw);
    if (c === '%') throw parseError(raw, 'missing IPv6 address');
  }
  throw parseError(raw, 'unable to parse IP');
}

export class Prefix {
  readonly addr: Addr;
  readonly bits: number;
  constructor(addr: Addr, bits: number) {
    this.addr = addr;
    this.bits = bits;
  }
  masked(): Prefix {
    const b = new Uint8Array(this.addr.bytes);
    for (let i = 0; i < b.length; i++) {
      const keep = Math.max(0, Math.min(8, this.bits - i * 8));
      b[i] = (b[i] as number) & (0xff << (8 - keep)) & 0xff;
    }
    return new Prefix(new Addr(b), this.bits);
  }
  contains(ip: Addr): boolean {
    if (ip.zone !== '' || ip.bytes.length !== this.addr.bytes.length) return false;
    return new Prefix(ip, this.bits).masked().addr.equals(this.masked().addr);
  }
  overlaps(o: Prefix): boolean {
    if (o.addr.bytes.length !== this.addr.bytes.length) return false;
    const bits = Math.min(this.bits, o.bits);
    return new Prefix(this.addr, bits).masked().addr.equals(new Prefix(o.addr, bits).masked().addr);
  }
  equals(other: unknown): boolean {
    return other instanceof Prefix && other.toString() === this.toString();
  }
  toString(): string {
    return `${this.addr.toString()}/${this.bits}`;
  }
}

export function parsePrefix(raw: string): Prefix {
  const failed = (msg: string) => new Error(`netip.ParsePrefix(${goQuote(raw)}): ${msg}`);
  const slash = raw.lastIndexOf('/');
  if (slash < 0) throw failed("no '/'");
  let addr: Addr;
  try {
    addr = parseAddr(raw.slice(0, slash));
  } catch (error) {
    throw failed((error as Error).message);
  }
  if (addr.zone !== '') throw failed('IPv6 zones cannot be present in a prefix');
  const bitsText = raw.slice(slash + 1);
  // A sign or a leading zero is refused before strconv.Atoi, which would take them; Atoi refuses
  // what is not a decimal int64; only then is the length checked against the family.
  const atoi = /^[+-]?[0-9]+$/.test(bitsText) ? BigInt(bitsText) : undefined;
  const leading = bitsText.length > 1 && !((bitsText[0] as string) >= '1' && (bitsText[0] as string) <= '9');
  if (leading || atoi === undefined || atoi > 9223372036854775807n || atoi < -9223372036854775808n) {
    throw failed(`bad bits after slash: ${goQuote(bitsText)}`);
  }
  const max = addr.is4 ? 32 : 128;
  if (atoi < 0n || atoi > BigInt(max)) throw failed('prefix length out of range');
  return new Prefix(addr, Number(atoi));
}
