/**
 * Reads every quoted text out of RFC 7234 warning header values (`299 - "text"`, several per header
 * allowed; `\"` and `\\` unescaped), in order. The API server sends one per deprecation, unknown
 * field or CEL warning.
 */
export function parseWarningHeaders(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    let i = 0;
    while (i < value.length) {
      const open = value.indexOf('"', i);
      if (open < 0) break;
      let text = '';
      let j = open + 1;
      for (; j < value.length && value[j] !== '"'; j++) {
        if (value[j] === '\\' && j + 1 < value.length) j++;
        text += value[j];
      }
      out.push(text);
      i = j + 1;
    }
  }
  return out;
}

/** The raw values of the `Warning` headers of a response (Node's `rawHeaders`: name, value, ...), in order. */
export function warningHeaderValues(rawHeaders: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === 'warning') values.push(rawHeaders[i + 1] ?? '');
  }
  return values;
}
