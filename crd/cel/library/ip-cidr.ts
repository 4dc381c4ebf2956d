/**
 * Kubernetes IP and CIDR libraries: ip, isIP, ip.isCanonical, family, isUnspecified, isLoopback,
 * isLinkLocalMulticast, isLinkLocalUnicast, isGlobalUnicast, string; cidr, isCIDR, containsIP, containsCIDR,
 * ip, prefixLength, masked, string.
 * Source: k8s.io/apiserver@v0.37.2/pkg/cel/library/ip.go and cidr.go.
 */

import type { Environment } from '@marcbachmann/cel-js';
import { goQuote } from '../../apimachinery/go-format.ts';
import { celConversion, celParses } from '../common/errors.ts';
import { type Addr, type Prefix, parseAddr, parsePrefix } from './netip.ts';

class IPNamespace {}
/** `net.IP` and `net.CIDR` as type values (for `type(ip(x)) == net.IP`), computed on first use. */
class NetNamespace {
  readonly #typeOf: (expression: string) => unknown;
  #ip: unknown;
  #cidr: unknown;
  constructor(typeOf: (expression: string) => unknown) {
    this.#typeOf = typeOf;
  }
  get IP(): unknown {
    this.#ip ??= this.#typeOf("type(ip('0.0.0.0'))");
    return this.#ip;
  }
  get CIDR(): unknown {
    this.#cidr ??= this.#typeOf("type(cidr('0.0.0.0/0'))");
    return this.#cidr;
  }
}
const IP = 'net.IP';
const CIDR = 'net.CIDR';

/** parseIPAddr in ip.go: no zones, no IPv4-mapped IPv6. */
export function parseIPAddr(raw: string): Addr {
  let addr: Addr;
  try {
    addr = parseAddr(raw);
  } catch (error) {
    throw new Error(
      `IP Address ${goQuote(raw)} parse error during conversion from string: ${(error as Error).message}`,
    );
  }
  if (addr.zone !== '') throw new Error(`IP address ${goQuote(raw)} with zone value is not allowed`);
  if (addr.is4In6) throw new Error(`IPv4-mapped IPv6 address ${goQuote(raw)} is not allowed`);
  return addr;
}

/** parseCIDR in cidr.go (its errors already carry the conversion prefix, which stringToCIDR adds again). */
export function parseCIDR(raw: string): Prefix {
  let prefix: Prefix;
  try {
    prefix = parsePrefix(raw);
  } catch (error) {
    throw new Error(`network address parse error during conversion from string: ${(error as Error).message}`);
  }
  if (prefix.addr.is4In6) throw new Error(`IPv4-mapped IPv6 address ${goQuote(raw)} is not allowed`);
  return prefix;
}

const toIP: (s: string) => Addr = celConversion(parseIPAddr);

const toCIDR: (s: string) => Prefix = celConversion(
  parseCIDR,
  'network address parse error during conversion from string: ',
);

function containsCIDR(a: Prefix, b: Prefix): boolean {
  return a.overlaps(b) && a.bits <= b.bits;
}

export function registerIPAndCIDR(env: Environment): void {
  const addrClass = parseAddr('0.0.0.0').constructor as new (...args: never[]) => Addr;
  const prefixClass = parsePrefix('0.0.0.0/0').constructor as new (...args: never[]) => Prefix;
  env.registerType(IP, addrClass);
  env.registerType(CIDR, prefixClass);
  env.registerType('IPNamespace', IPNamespace);
  env.registerConstant('ip', 'IPNamespace', new IPNamespace());
  env.registerFunction(`ip(string): ${IP}`, toIP);
  env.registerFunction('isIP(string): bool', celParses(parseIPAddr));
  env.registerFunction(
    'IPNamespace.isCanonical(string): bool',
    (_ns: IPNamespace, s: string) => toIP(s).toString() === s,
  );
  env.registerFunction(`${IP}.family(): int`, (a: Addr) => (a.is4 ? 4n : 6n));
  env.registerFunction(`${IP}.isUnspecified(): bool`, (a: Addr) => a.isUnspecified());
  env.registerFunction(`${IP}.isLoopback(): bool`, (a: Addr) => a.isLoopback());
  env.registerFunction(`${IP}.isLinkLocalMulticast(): bool`, (a: Addr) => a.isLinkLocalMulticast());
  env.registerFunction(`${IP}.isLinkLocalUnicast(): bool`, (a: Addr) => a.isLinkLocalUnicast());
  env.registerFunction(`${IP}.isGlobalUnicast(): bool`, (a: Addr) => a.isGlobalUnicast());
  env.registerFunction(`string(${IP}): string`, (a: Addr) => a.toString());

  env.registerFunction(`cidr(string): ${CIDR}`, toCIDR);
  env.registerFunction('isCIDR(string): bool', celParses(parseCIDR));
  env.registerFunction(`${CIDR}.containsIP(string): bool`, (c: Prefix, s: string) => c.contains(toIP(s)));
  env.registerFunction(`${CIDR}.containsIP(${IP}): bool`, (c: Prefix, a: Addr) => c.contains(a));
  env.registerFunction(`${CIDR}.containsCIDR(string): bool`, (c: Prefix, s: string) => containsCIDR(c, toCIDR(s)));
  env.registerFunction(`${CIDR}.containsCIDR(${CIDR}): bool`, containsCIDR);
  env.registerFunction(`${CIDR}.ip(): ${IP}`, (c: Prefix) => c.addr);
  env.registerFunction(`${CIDR}.prefixLength(): int`, (c: Prefix) => BigInt(c.bits));
  env.registerFunction(`${CIDR}.masked(): ${CIDR}`, (c: Prefix) => c.masked());
  env.registerFunction(`string(${CIDR}): string`, (c: Prefix) => c.toString());
  const types = new NetNamespace((expression) => env.evaluate(expression));
  env.registerType('NetNamespace', { ctor: NetNamespace, fields: { IP: 'type', CIDR: 'type' } });
  env.registerConstant('net', 'NetNamespace', types);
}
