/**
 * CEL property-name escaping for OpenAPI property names, as the API server does it.
 * Source: k8s.io/apiserver@v0.37.2/pkg/cel/escaping.go (Escape, Unescape).
 */

const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

const SIMPLE_IDENT = /^[a-zA-Z0-9_]*$/;
const EXPAND = /(__|[-./]|[^a-zA-Z0-9\-./_])/g;
const ESCAPES: Record<string, string> = { __: '__underscores__', '.': '__dot__', '-': '__dash__', '/': '__slash__' };

/** The CEL field name for a property name, or undefined when the name cannot be accessed from CEL. */
export function escapePropertyName(name: string): string | undefined {
  if (name.length === 0 || (name[0] !== undefined && name[0] >= '0' && name[0] <= '9')) return undefined;
  if (RESERVED.has(name)) return `__${name}__`;
  if (SIMPLE_IDENT.test(name) && !name.includes('__')) return name;
  let ok = true;
  const escaped = name.replace(EXPAND, (s) => {
    const replacement = ESCAPES[s];
    if (replacement === undefined) ok = false;
    return replacement ?? '';
  });
  return ok ? escaped : undefined;
}

const UNEXPAND = /(_{2}[^_]+_{2})/g;
const UNESCAPES: Record<string, string> = { underscores: '__', dot: '.', dash: '-', slash: '/' };

/** The property name for an escaped CEL field name, or undefined when it is not a valid escape. */
export function unescapePropertyName(escaped: string): string | undefined {
  let ok = true;
  const name = escaped.replace(UNEXPAND, (s) => {
    const contents = s.slice(2, -2);
    const plain = UNESCAPES[contents];
    if (plain !== undefined) return plain;
    if (RESERVED.has(contents)) {
      if (s.length !== escaped.length) ok = false;
      return contents;
    }
    ok = false;
    return '';
  });
  return ok ? name : undefined;
}
