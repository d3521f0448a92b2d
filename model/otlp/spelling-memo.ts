// Series names memoised by what determines them — the scope's and the point's attribute
// bytes and the metric name — so that a series exported every interval is named once, not
// once per point; and, per series, the metric it resolved to in the last check that wrote
// it, so a known series costs two map lookups. Bounded: past the limits it starts again empty.

const MAX_POINT_KEYS = 250_000;
const MAX_SCOPES = 10_000;

/** A series' spelling (`name|ST[…]`, or why it has none) and its last resolution. */
export class SeriesName {
  private check: string | null = null;
  private resolution: unknown = null;

  constructor(readonly spelling: string | { reason: string }) {}

  /** What `resolve` gives for this spelling in `check`, remembered for the last check asked. */
  resolvedIn<R>(check: string, resolve: (spelling: string) => R): R {
    if (this.check !== check) {
      this.resolution = resolve(this.spelling as string);
      this.check = check;
    }
    return this.resolution as R;
  }
}

export class SpellingMemo {
  private readonly points = new Map<string, Map<string, SeriesName>>();
  private readonly scopes = new Map<string, string>();

  /** A short id for a scope key (resource and scope bytes can be long; ids keep point keys short). */
  scopeId(scopeKey: string): string {
    let id = this.scopes.get(scopeKey);
    if (id === undefined) {
      if (this.scopes.size >= MAX_SCOPES) this.clear();
      id = String(this.scopes.size);
      this.scopes.set(scopeKey, id);
    }
    return id;
  }

  /** The names memoised for one point key (scope id and attribute bytes). */
  point(key: string): Map<string, SeriesName> {
    let names = this.points.get(key);
    if (names === undefined) {
      if (this.points.size >= MAX_POINT_KEYS) this.points.clear();
      names = new Map();
      this.points.set(key, names);
    }
    return names;
  }

  private clear(): void {
    // Scope ids are reused after a clear, so the names keyed by them go too.
    this.scopes.clear();
    this.points.clear();
  }
}
