/**
 * Kubernetes URL library: url, isURL, getScheme, getHost, getHostname, getPort, getEscapedPath, getQuery.
 * Parsing follows Go's net/url ParseRequestURI (absolute URLs or absolute paths only).
 * Source: k8s.io/apiserver@v0.37.2/pkg/cel/library/urls.go; Go src/net/url/url.go.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { celConversion, celParses } from '../common/errors.ts';

/** The parts of a URL the library reads (Go's url.URL fields). */
interface UrlParts {
  scheme: string;
  opaque: string;
  host: string;
  path: string;
  rawQuery: string;
}

export class CelURL implements UrlParts {
  scheme: string;
  opaque: string;
  host: string;
  path: string;
  rawQuery: string;
  constructor(parts: UrlParts) {
    this.scheme = parts.scheme;
    this.opaque = parts.opaque;
    this.host = parts.host;
    this.path = parts.path;
    this.rawQuery = parts.rawQuery;
  }
  equals(other: unknown): boolean {
    return other instanceof CelURL && other.toString() === this.toString();
  }
  toString(): string {
    if (this.opaque) return `${this.scheme}:${this.opaque}`;
    const auth = this.host || this.scheme ? `//${this.host}` : '';
    return `${this.scheme ? `${this.scheme}:` : ''}${auth}${escapePath(this.path)}${this.rawQuery ? `?${this.rawQuery}` : ''}`;
  }
}

/** Go's stringContainsCTLByte. */
const hasControlCharacter = (s: string) => Array.from(s).some((c) => (c.codePointAt(0) ?? 0) < 0x20 || c === '\x7f');
const SCHEME = /^([a-zA-Z][a-zA-Z0-9+\-.]*):/;

function fail(raw: string, reason: string): never {
  throw new Error(`parse ${JSON.stringify(raw)}: ${reason}`);
}

function unescapePath(raw: string, s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    const bad = /%(?![0-9a-fA-F]{2}).{0,2}/.exec(s)?.[0] ?? '%';
    return fail(raw, `invalid URL escape ${JSON.stringify(bad)}`);
  }
}

/** Go's url.PathEscape-like encoding of a path for EscapedPath. */
function escapePath(path: string): string {
  return path.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/]/gu, (c) =>
    Array.from(Buffer.from(c, 'utf8'))
      .map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)
      .join(''),
  );
}

/** Characters Go's net/url accepts unescaped in a host (shouldEscape with encodeHost). */
const HOST_CHAR = /[A-Za-z0-9\-._~!$&'()*+,;=:[\]<>"%]/;

/** parseHost in Go's net/url: the error text, or undefined when the host is valid. */
function hostError(host: string): string | undefined {
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    if (close < 0) return "missing ']' in host";
    const port = host.slice(close + 1);
    if (port !== '' && !/^:\d*$/.test(port)) return `invalid port ${JSON.stringify(port)} after host`;
    return undefined;
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !/^\d*$/.test(host.slice(colon + 1)))
    return `invalid port ${JSON.stringify(host.slice(colon))} after host`;
  for (const c of host) {
    if ((c.codePointAt(0) ?? 0) < 0x80 && !HOST_CHAR.test(c))
      return `invalid character ${JSON.stringify(c)} in host name`;
  }
  return undefined;
}

/** Go's url.ParseRequestURI followed by url.Parse (fragment handling), as stringToUrl does. */
export function parseRequestURI(raw: string): CelURL {
  if (hasControlCharacter(raw)) fail(raw, 'net/url: invalid control character in URL');
  if (raw === '') fail(raw, 'empty url');
  let rest = raw;
  let scheme = '';
  const m = SCHEME.exec(rest);
  if (m) {
    scheme = (m[1] ?? '').toLowerCase();
    rest = rest.slice((m[0] ?? '').length);
  } else if (
    /^[^a-zA-Z][^/]*:/.test(rest) &&
    rest.indexOf(':') < (rest.indexOf('/') < 0 ? Infinity : rest.indexOf('/'))
  ) {
    if (rest[0] === ':') fail(raw, 'missing protocol scheme');
  }
  const q = rest.indexOf('?');
  let rawQuery = '';
  if (q >= 0) {
    rawQuery = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  if (!rest.startsWith('/')) {
    if (scheme !== '') return new CelURL({ scheme, opaque: rest, host: '', path: '', rawQuery });
    fail(raw, 'invalid URI for request');
  }
  let host = '';
  if (rest.startsWith('//') && (scheme !== '' || !rest.startsWith('///'))) {
    const authEnd = rest.indexOf('/', 2);
    const authority = authEnd < 0 ? rest.slice(2) : rest.slice(2, authEnd);
    rest = authEnd < 0 ? '' : rest.slice(authEnd);
    const at = authority.lastIndexOf('@');
    host = at >= 0 ? authority.slice(at + 1) : authority;
    const error = hostError(host);
    if (error !== undefined) fail(raw, error);
  }
  return new CelURL({ scheme, opaque: '', host, path: unescapePath(raw, rest), rawQuery });
}

function hostname(host: string): string {
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    return host.slice(1, close < 0 ? undefined : close);
  }
  const colon = host.lastIndexOf(':');
  return colon >= 0 ? host.slice(0, colon) : host;
}

function port(host: string): string {
  const colon = host.lastIndexOf(':');
  if (colon < 0) return '';
  if (host.startsWith('[') && host.lastIndexOf(']') > colon) return '';
  return host.slice(colon + 1);
}

function query(rawQuery: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of rawQuery.split('&')) {
    if (part === '' || part.includes(';')) continue;
    const eq = part.indexOf('=');
    const decode = (s: string) => {
      try {
        return decodeURIComponent(s.replaceAll('+', ' '));
      } catch {
        return undefined;
      }
    };
    const key = decode(eq < 0 ? part : part.slice(0, eq));
    const value = decode(eq < 0 ? '' : part.slice(eq + 1));
    if (key === undefined || value === undefined) continue;
    out.set(key, [...(out.get(key) ?? []), value]);
  }
  return out;
}

export function registerUrls(env: Environment): void {
  env.registerType('kubernetes.URL', CelURL);
  env.registerFunction(
    'url(string): kubernetes.URL',
    celConversion(parseRequestURI, 'URL parse error during conversion from string: '),
  );
  env.registerFunction('isURL(string): bool', celParses(parseRequestURI));
  env.registerFunction('kubernetes.URL.getScheme(): string', (u: CelURL) => u.scheme);
  env.registerFunction('kubernetes.URL.getHost(): string', (u: CelURL) => u.host);
  env.registerFunction('kubernetes.URL.getHostname(): string', (u: CelURL) => hostname(u.host));
  env.registerFunction('kubernetes.URL.getPort(): string', (u: CelURL) => port(u.host));
  env.registerFunction('kubernetes.URL.getEscapedPath(): string', (u: CelURL) => escapePath(u.path));
  env.registerFunction('kubernetes.URL.getQuery(): map<string, list<string>>', (u: CelURL) => query(u.rawQuery));
}
