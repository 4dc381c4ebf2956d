/**
 * IP parsing as the formats `ipv4`, `ipv6` and `cidr` do it: k8s.io/utils/net's "sloppy" parsers
 * (Go 1.16's net.ParseIP, which accepts leading zeros in IPv4 octets) and Go's strict net.ParseIP
 * (net/netip: no leading zeros, at most four hex digits a group, no zone).
 */

interface IpSyntax {
  /** IPv4 octets may have leading zeros ("010"). */
  leadingZeros: boolean;
  /** The longest IPv6 hex group; Infinity in the sloppy parser, whose xtoi only bounds the value. */
  maxGroupDigits: number;
}

const SLOPPY: IpSyntax = { leadingZeros: true, maxGroupDigits: Number.POSITIVE_INFINITY };
const STRICT: IpSyntax = { leadingZeros: false, maxGroupDigits: 4 };

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-fA-F]$/.test(c);

function ipv4Length(s: string, syntax: IpSyntax): boolean {
  const parts = s.split('.');
  if (parts.length !== 4) return false;
  for (const part of parts) {
    if (part.length === 0 || ![...part].every(isDigit)) return false;
    if (!syntax.leadingZeros && (part.length > 3 || (part.length > 1 && part.startsWith('0')))) return false;
    if (Number(part) > 255) return false;
  }
  return true;
}

function ipv6Valid(input: string, syntax: IpSyntax): boolean {
  let s = input;
  let ellipsis = -1;
  let i = 0;
  if (s.startsWith('::')) {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return true;
  }
  while (i < 16) {
    let c = 0;
    while (c < s.length && isHex(s[c])) c++;
    if (c === 0 || c > syntax.maxGroupDigits || Number.parseInt(s.slice(0, c), 16) > 0xffff) return false;
    if (c < s.length && s[c] === '.') {
      if (ellipsis < 0 && i !== 12) return false;
      if (i + 4 > 16) return false;
      if (!ipv4Length(s, syntax)) return false;
      s = '';
      i += 4;
      break;
    }
    i += 2;
    s = s.slice(c);
    if (s.length === 0) break;
    if (s[0] !== ':' || s.length === 1) return false;
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) return false;
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) return false;
  if (i < 16) return ellipsis >= 0;
  return ellipsis < 0;
}

/** What k8s.io/utils/net.ParseIPSloppy returns: 4 for IPv4, 6 for IPv6, 0 for not an IP. */
export function parseIpSloppy(s: string): 0 | 4 | 6 {
  for (const ch of s) {
    if (ch === '.') return ipv4Length(s, SLOPPY) ? 4 : 0;
    if (ch === ':') return ipv6Valid(s, SLOPPY) ? 6 : 0;
  }
  return 0;
}

/** Whether Go's net.ParseIP accepts s. */
export function parseIpStrict(s: string): boolean {
  if (s.includes(':')) return ipv6Valid(s, STRICT);
  return ipv4Length(s, STRICT);
}

/** k8s.io/utils/net.ParseCIDRSloppy succeeds. */
export function isCidrSloppy(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const addr = s.slice(0, slash);
  const mask = s.slice(slash + 1);
  let bits = 32;
  if (!ipv4Length(addr, SLOPPY)) {
    if (!ipv6Valid(addr, SLOPPY)) return false;
    bits = 128;
  }
  if (mask.length === 0 || ![...mask].every(isDigit)) return false;
  return Number(mask) <= bits;
}
