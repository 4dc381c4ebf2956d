/**
 * The warnings of one request as the API server's recorder keeps them (endpoints/filters/warning.go):
 * in the order they were added, each text once. Two ratcheted rules failing with the same message
 * give one warning.
 */
export class WarningList {
  private readonly seen = new Set<string>();
  readonly texts: string[] = [];

  constructor(texts: readonly string[] = []) {
    this.add(texts);
  }

  add(texts: readonly string[]): void {
    for (const text of texts) {
      if (this.seen.has(text)) continue;
      this.seen.add(text);
      this.texts.push(text);
    }
  }
}

/** warning.go truncateAtTotalRunes and truncateItemRunes (v0.37.2, lines 40-41). */
const WARNINGS_TOTAL_RUNES = 4 * 1024;
const WARNING_ITEM_RUNES = 256;

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
 * The Warning headers the API server's recorder (warning.go recorder.AddWarning) writes for the
 * texts added in this order: empty and repeated texts dropped, and texts a header cannot carry
 * (control characters) dropped without counting; past `totalRunes` in all, every warning, earlier
 * ones included, is cut to `itemRunes` runes, and once those fill `totalRunes` the rest are dropped.
 * What a client sees of a request's warnings; apply it once, to all of them in the server's order.
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
