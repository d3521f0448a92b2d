// The columns of a DF4 result: one per output stream, `count` cells each.
import type { Histogram } from '../histogram/index.js';
import type { TextEntry } from './text.js';

interface ColumnHead {
  label: string;
  /** `category:value` strings, `__check_uuid` and `__name` first. */
  tags: string[];
}

export type NumericColumn = ColumnHead & {
  kind: 'numeric';
  values: (number | null)[];
  /** Its cells as DF4 JSON (model/fetch/df4.ts, ASCII), rendered while the streams after it were being read. */
  json?: string;
};
export type HistogramColumn = ColumnHead & { kind: 'histogram'; values: (Histogram | null)[] };
/** Text cells hold [offset ms within the slot, value] entries. */
export type TextColumn = ColumnHead & { kind: 'text'; values: TextEntry[][] };

export type Column = NumericColumn | HistogramColumn | TextColumn;

/** Tags every column carries (what a reduced stream still has in common). */
export function commonTags(columns: readonly Pick<Column, 'tags'>[]): string[] {
  if (columns.length === 0) return [];
  const rest = columns.slice(1).map((c) => new Set(c.tags));
  return columns[0]!.tags.filter((t) => rest.every((s) => s.has(t)));
}
