// One copy of each repeated string. Metrics reach a shard by structured clone, so every
// metric arrives with its own copy of its check uuid, check name and tag texts; a shard
// holding a million series keeps them once each instead (see README, Memory).

export class Interner {
  private readonly texts = new Map<string, string>();

  /** The kept copy of `text` (kept now if it is new). */
  of(text: string): string {
    const kept = this.texts.get(text);
    if (kept !== undefined) return kept;
    this.texts.set(text, text);
    return text;
  }

  get size(): number {
    return this.texts.size;
  }
}
