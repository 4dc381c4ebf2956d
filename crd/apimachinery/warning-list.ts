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
