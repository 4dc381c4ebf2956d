/**
 * url.ParseRequestURI from Go's net/url succeeds: the check behind the `uri` format
 * (kube-openapi strfmt via govalidator.IsRequestURI).
 */

const SCHEME_CHAR = /^[A-Za-z0-9+.-]$/;

function hasControlByte(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** getScheme: "" when there is none, undefined when the URL is malformed ("missing protocol scheme"). */
function splitScheme(raw: string): { scheme: string; rest: string } | undefined {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] ?? '';
    if (/[A-Za-z]/.test(c)) continue;
    if (SCHEME_CHAR.test(c)) {
      if (i === 0) return { scheme: '', rest: raw };
      continue;
    }
    if (c === ':') {
      if (i === 0) return undefined;
      return { scheme: raw.slice(0, i), rest: raw.slice(i + 1) };
    }
    return { scheme: '', rest: raw };
  }
  return { scheme: '', rest: raw };
}

/** unescape(s, mode) fails on a bad %-escape, and in a host on characters shouldEscape rejects. */
function validEscapes(s: string, host: boolean): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s[i] ?? '';
    if (c === '%') {
      if (!/^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) return false;
      i += 2;
      continue;
    }
    if (host && c.charCodeAt(0) < 0x80 && !/[A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"]/.test(c)) return false;
  }
  return true;
}

function validUserinfo(s: string): boolean {
  return /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(s);
}

function validHost(host: string): boolean {
  if (host.startsWith('[')) {
    const close = host.lastIndexOf(']');
    if (close < 0) return false;
    const port = host.slice(close + 1);
    if (port !== '' && !/^:[0-9]*$/.test(port)) return false;
    return validEscapes(host.slice(0, close + 1), true);
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !/^:[0-9]*$/.test(host.slice(colon))) return false;
  return validEscapes(host, true);
}

export function isRequestUri(raw: string): boolean {
  if (hasControlByte(raw) || raw === '') return false;
  if (raw === '*') return true;
  const parts = splitScheme(raw);
  if (!parts) return false;
  let { rest } = parts;
  const { scheme } = parts;
  if (!(rest.endsWith('?') && rest.split('?').length === 2)) {
    const q = rest.indexOf('?');
    if (q >= 0) rest = rest.slice(0, q);
  } else {
    rest = rest.slice(0, -1);
  }
  if (!rest.startsWith('/')) return scheme !== '';
  if (scheme !== '' && rest.startsWith('//')) {
    const afterSlashes = rest.slice(2);
    const slash = afterSlashes.indexOf('/');
    const authority = slash < 0 ? afterSlashes : afterSlashes.slice(0, slash);
    rest = slash < 0 ? '' : afterSlashes.slice(slash);
    const at = authority.lastIndexOf('@');
    if (at >= 0 && !validUserinfo(authority.slice(0, at))) return false;
    if (!validHost(at >= 0 ? authority.slice(at + 1) : authority)) return false;
  }
  return validEscapes(rest, false);
}
