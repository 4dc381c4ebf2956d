/**
 * A JSON document read as the API server's decoder (sigs.k8s.io/json, strict) reads the same text:
 * - every int64 exact (a BigInt beyond 2^53, crd/json-int64.ts), anything else a float64;
 * - a number beyond float64 (`1e400`) is the decoder's error, `json: cannot unmarshal number 1e400
 *   into Go value of type float64`, and the value is not used;
 * - a lone surrogate escape (`"\ud800"`) is U+FFFD, as encoding/json's unquote writes it;
 * - a key repeated in one object keeps its last value, and is a strict decoding error
 *   `duplicate field "spec.a"` (the path as the decoder builds it: keys joined by dots, `[i]` for
 *   list items), reported in the decoder's order, each path once, at most 100.
 * JSON.parse does none of the last three, and js-yaml refuses a repeated key.
 */

import type { TextDecoding } from '../../crd/index.ts';
import { JsonByte as Char } from '../../crd/json-bytes.ts';
import { int64OrFloat } from '../../crd/json-int64.ts';
import { type JsonObject, setKey } from '../../crd/json-value.ts';

export interface JsonDocument {
  value: unknown;
  /** Paths of repeated keys, in the decoder's order. */
  duplicateFields: string[];
  /** The decoder's error for a number float64 cannot hold (the first one). */
  numberError?: string;
}

/** What the engine is told of the document's text (admit's `textDecoding`). */
export function textDecodingOf(document: JsonDocument): TextDecoding {
  const { duplicateFields, numberError } = document;
  return { duplicateFields, ...(numberError !== undefined && { error: numberError }) };
}

/** sigs.k8s.io/json keeps at most this many strict errors. */
const MAX_STRICT_ERRORS = 100;

class NotJson extends Error {}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * The document, or undefined when the text is not exactly one JSON value (the YAML reader then reads
 * it and names what is wrong, as before). Nesting is bounded by the caller's depth limit.
 */
export function readJsonDocument(text: string, maxDepth: number): JsonDocument | undefined {
  const reader = new Reader(text, maxDepth);
  try {
    reader.skipSpace();
    const value = reader.value('', 1);
    reader.skipSpace();
    if (reader.at < text.length) return undefined;
    return {
      value,
      duplicateFields: reader.duplicates,
      ...(reader.numberError !== undefined && { numberError: reader.numberError }),
    };
  } catch (error) {
    if (error instanceof NotJson) return undefined;
    throw error;
  }
}

class Reader {
  at = 0;
  duplicates: string[] = [];
  numberError: string | undefined;
  private readonly seen = new Set<string>();
  private readonly text: string;
  private readonly maxDepth: number;

  constructor(text: string, maxDepth: number) {
    this.text = text;
    this.maxDepth = maxDepth;
  }

  skipSpace(): void {
    const { text } = this;
    for (;;) {
      const c = text.charCodeAt(this.at);
      if (c !== Char.Space && c !== Char.Newline && c !== Char.Return && c !== Char.Tab) return;
      this.at++;
    }
  }

  private expect(c: number): void {
    this.skipSpace();
    if (this.text.charCodeAt(this.at) !== c) throw new NotJson();
    this.at++;
  }

  value(path: string, depth: number): unknown {
    const { text } = this;
    switch (text.charCodeAt(this.at)) {
      case Char.OpenObject:
        return this.object(path, depth);
      case Char.OpenArray:
        return this.array(path, depth);
      case Char.Quote:
        return this.string();
    }
    for (const [word, value] of WORDS) {
      if (text.startsWith(word, this.at)) {
        this.at += word.length;
        return value;
      }
    }
    return this.number();
  }

  private object(path: string, depth: number): JsonObject {
    if (depth > this.maxDepth) throw new NotJson();
    this.at++;
    const out: JsonObject = {};
    this.skipSpace();
    if (this.text.charCodeAt(this.at) === Char.CloseObject) {
      this.at++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      if (this.text.charCodeAt(this.at) !== Char.Quote) throw new NotJson();
      const key = this.string();
      const keyPath = path === '' ? key : `${path}.${key}`;
      if (Object.hasOwn(out, key)) this.duplicate(keyPath);
      this.expect(Char.Colon);
      this.skipSpace();
      setKey(out, key, this.value(keyPath, depth + 1));
      this.skipSpace();
      const c = this.text.charCodeAt(this.at++);
      if (c === Char.CloseObject) return out;
      if (c !== Char.Comma) throw new NotJson();
    }
  }

  private array(path: string, depth: number): unknown[] {
    if (depth > this.maxDepth) throw new NotJson();
    this.at++;
    const out: unknown[] = [];
    this.skipSpace();
    if (this.text.charCodeAt(this.at) === Char.CloseArray) {
      this.at++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      out.push(this.value(`${path}[${out.length}]`, depth + 1));
      this.skipSpace();
      const c = this.text.charCodeAt(this.at++);
      if (c === Char.CloseArray) return out;
      if (c !== Char.Comma) throw new NotJson();
    }
  }

  /** A string token (the reader at its opening quote); JSON.parse checks and unescapes it. */
  private string(): string {
    const { text } = this;
    const start = this.at;
    let escaped = false;
    let i = start + 1;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === Char.Quote) break;
      if (c === Char.Backslash) {
        escaped = true;
        i++;
      } else if (c < 0x20) throw new NotJson();
    }
    if (i >= text.length) throw new NotJson();
    this.at = i + 1;
    if (!escaped) return text.slice(start + 1, i);
    const token = text.slice(start, i + 1);
    let value: string;
    try {
      value = JSON.parse(token) as string;
    } catch {
      throw new NotJson();
    }
    return SURROGATE_ESCAPE.test(token) ? value.toWellFormed() : value;
  }

  private number(): number | bigint {
    NUMBER.lastIndex = this.at;
    const match = NUMBER.exec(this.text);
    if (!match) throw new NotJson();
    const literal = match[0];
    this.at += literal.length;
    const value = /[.eE]/.test(literal) ? Number(literal) : int64OrFloat(literal);
    if (typeof value === 'number' && !Number.isFinite(value)) {
      this.numberError ??= `json: cannot unmarshal number ${literal} into Go value of type float64`;
      return 0;
    }
    return value;
  }

  private duplicate(path: string): void {
    if (this.duplicates.length >= MAX_STRICT_ERRORS || this.seen.has(path)) return;
    this.seen.add(path);
    this.duplicates.push(path);
  }
}

const WORDS: ReadonlyArray<readonly [string, unknown]> = [
  ['true', true],
  ['false', false],
  ['null', null],
];
