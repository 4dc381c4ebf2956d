/**
 * Go's encoding/base64 decoding (decodeQuantum, not strict), for the alphabet and padding of one encoding,
 * with its CorruptInputError text. The API server decodes a CEL value of `format: byte` with
 * base64.URLEncoding (kube-openapi strfmt.Base64.UnmarshalText), whatever alphabet the OpenAPI check allowed.
 * Source: go/src/encoding/base64/base64.go.
 */
const URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const URL_DECODE = new Map([...URL_ALPHABET].map((c, i) => [c.charCodeAt(0), i]));
const PAD = '='.charCodeAt(0);
const isNewline = (c: number | undefined) => c === 0x0a || c === 0x0d;

export class Base64CorruptInputError extends Error {
  constructor(offset: number) {
    super(`illegal base64 data at input byte ${offset}`);
  }
}

/** One quantum from `si`: its 6-bit values (2 to 4 of them, or none at the end) and where the next starts. */
function decodeQuantum(src: Uint8Array, start: number): { si: number; values: number[] } {
  const values: number[] = [];
  let si = start;
  while (values.length < 4) {
    if (si === src.length) {
      if (values.length === 0) return { si, values };
      throw new Base64CorruptInputError(si - values.length);
    }
    const c = src[si++] as number;
    const v = URL_DECODE.get(c);
    if (v !== undefined) {
      values.push(v);
      continue;
    }
    if (isNewline(c)) continue;
    if (c !== PAD || values.length < 2) throw new Base64CorruptInputError(si - 1);
    if (values.length === 2) {
      while (si < src.length && isNewline(src[si])) si++;
      if (si === src.length) throw new Base64CorruptInputError(src.length);
      if (src[si] !== PAD) throw new Base64CorruptInputError(si - 1);
      si++;
    }
    while (si < src.length && isNewline(src[si])) si++;
    if (si < src.length) throw new Base64CorruptInputError(si);
    return { si, values };
  }
  return { si, values };
}

/** base64.URLEncoding.DecodeString: the bytes, or a Base64CorruptInputError where Go reports one. */
export function decodeGoBase64Url(text: string): Uint8Array {
  const src = Buffer.from(text, 'latin1');
  const out: number[] = [];
  let si = 0;
  while (si < src.length) {
    const q = decodeQuantum(src, si);
    si = q.si;
    const [a = 0, b = 0, c = 0, d = 0] = q.values;
    const bits = (a << 18) | (b << 12) | (c << 6) | d;
    const bytes = [(bits >> 16) & 0xff, (bits >> 8) & 0xff, bits & 0xff];
    out.push(...bytes.slice(0, q.values.length - 1));
    if (q.values.length < 4) break;
  }
  return new Uint8Array(out);
}
