import { cutText } from '../../crd/index.ts';

/**
 * What the webhook sends back and logs stays bounded whatever the input: the API server's own
 * Warning-header recorder (k8s.io/apiserver pkg/endpoints/filters/warning.go) for warnings, and a
 * cap on echoed messages. A value in a message is echoed whole by the API server, whose request
 * bodies are at most 3 MiB; a direct caller can send the webhook 7 MiB, so past MESSAGE_LIMIT
 * characters a message is cut (a denial stays a denial, with its cause and field intact).
 */

/** warning.go truncateAtTotalRunes and truncateItemRunes. */
const WARNINGS_TOTAL_RUNES = 4 * 1024;
const WARNING_ITEM_RUNES = 256;
/** Characters of a Status message or cause kept; far beyond any message of an object the API server accepts whole. */
export const MESSAGE_LIMIT = 64 * 1024;
/**
 * The engine cuts a message this short, so that with its note (`... (N more characters)`, at most 42
 * characters) it stays within MESSAGE_LIMIT: cut again, the note would miscount what was left out.
 */
export const ENGINE_MESSAGE_LIMIT = MESSAGE_LIMIT - 64;
/** Characters of a message written to the log. */
export const LOG_MESSAGE_LIMIT = 1024;
/** Characters of an input value (a review's uid) written to the log as a field; a UID has 36. */
export const LOG_FIELD_LIMIT = 128;

function runeCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function firstRunes(text: string, count: number): string {
  let out = '';
  let n = 0;
  for (const rune of text) {
    if (n++ === count) break;
    out += rune;
  }
  return out;
}

/** net.NewWarningHeader refuses texts that are not valid UTF-8 or hold control characters. */
function headerSafe(text: string): boolean {
  return !/\p{Cc}/u.test(text) && text.isWellFormed();
}

export interface WarningLimits {
  totalRunes: number;
  itemRunes: number;
}

/**
 * The warnings as the API server's recorder would emit them as Warning headers: empty, repeated and
 * unencodable texts dropped; past `totalRunes` in total every warning is cut to `itemRunes` and, once
 * those fill `totalRunes`, the rest are dropped.
 */
export function recordWarnings(
  texts: readonly string[],
  limits: WarningLimits = { totalRunes: WARNINGS_TOTAL_RUNES, itemRunes: WARNING_ITEM_RUNES },
): string[] {
  const recorded = new Set<string>();
  const ordered: string[] = [];
  let out: string[] = [];
  let written = 0;
  let truncating = false;
  const cut = (text: string) => (runeCount(text) > limits.itemRunes ? firstRunes(text, limits.itemRunes) : text);
  for (const text of texts) {
    if (text === '') continue;
    if (truncating && written >= limits.totalRunes) break;
    if (recorded.has(text)) continue;
    recorded.add(text);
    ordered.push(text);
    const item = truncating ? cut(text) : text;
    if (!headerSafe(item)) continue;
    const length = runeCount(item);
    if (written + length <= limits.totalRunes || truncating) {
      written += length;
      out.push(item);
      continue;
    }
    truncating = true;
    written = 0;
    out = [];
    for (const earlier of ordered) {
      const shortened = cut(earlier);
      if (!headerSafe(shortened)) continue;
      written += runeCount(shortened);
      out.push(shortened);
    }
  }
  return out;
}

/** A message cut to `limit` characters, saying how much was left out (the engine's cutText). */
export function boundMessage(message: string, limit: number = MESSAGE_LIMIT): string {
  return cutText(message, limit);
}
