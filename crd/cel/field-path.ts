/**
 * The `fieldPath` of a validation rule, validated against the schema and normalized to a field.Path string.
 * Source: k8s.io/apiextensions-apiserver@v0.37.2/pkg/apiserver/schema/cel/validation.go (ValidFieldPath).
 */
import type { JSONSchemaProps } from '../apiextensions.ts';
import { ownValue } from '../json-value.ts';

function tokenize(path: string): string[] | undefined {
  const tokens: string[] = [];
  let i = 0;
  while (i < path.length) {
    const c = path[i] as string;
    if (c === '.' || c === '[' || c === ']') {
      tokens.push(c);
      i++;
      continue;
    }
    if (c === "'") {
      let j = i + 1;
      while (j < path.length && !(path[j] === "'" && path[j - 1] !== '\\')) j++;
      if (j >= path.length) {
        tokens.push(path.slice(i));
        break;
      }
      tokens.push(path.slice(i, j + 1));
      i = j + 1;
      continue;
    }
    let j = i;
    while (j < path.length && !'.[]'.includes(path[j] as string)) j++;
    tokens.push(path.slice(i, j));
    i = j;
  }
  return tokens;
}

const ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  "'": "'",
  '\\': '\\',
};

function unescapeSingleQuote(s: string): string | undefined {
  let ok = true;
  const out = s.replace(/\\./g, (m) => {
    const r = ESCAPES[m[1] as string];
    if (r === undefined) ok = false;
    return r ?? '';
  });
  return ok ? out : undefined;
}

/** The normalized field path (e.g. `.spec['a.b']` -> `spec[a.b]`), or undefined when it is not valid for the schema. */
export function normalizeFieldPath(jsonPath: string, root: JSONSchemaProps): string | undefined {
  const tokens = tokenize(jsonPath);
  if (!tokens) return undefined;
  let schema: JSONSchemaProps | undefined = root;
  let out = '';
  const append = (name: string) => {
    if (!schema) return false;
    if (schema.properties) {
      out = out === '' ? name : `${out}.${name}`;
      schema = ownValue(schema.properties, name) as JSONSchemaProps | undefined;
      return schema !== undefined;
    }
    if (schema.additionalProperties !== undefined) {
      out = `${out}[${name}]`;
      schema = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
      return true;
    }
    return false;
  };
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i] as string;
    if (tok === '[') {
      const quoted = tokens[++i];
      if (quoted === undefined || quoted.length < 2 || !quoted.startsWith("'") || !quoted.endsWith("'"))
        return undefined;
      const name = unescapeSingleQuote(quoted.slice(1, -1));
      if (name === undefined || !append(name)) return undefined;
      if (tokens[++i] !== ']') return undefined;
    } else if (tok === '.') {
      const name = tokens[++i];
      if (name === undefined || !append(name)) return undefined;
    } else {
      return undefined;
    }
  }
  return out;
}
