// A fetch column as JSON, for streams read on another node: non-finite numbers as strings
// (JSON has no NaN or Infinity) and histograms in their base64 circllhist form.
import { histogramFromBase64, histogramToBase64 } from '../histogram/index.js';
import type { Column } from './column.js';

type WireNumber = number | string | null;
export type WireColumn =
  | { label: string; tags: string[]; kind: 'numeric'; values: WireNumber[] }
  | { label: string; tags: string[]; kind: 'histogram'; values: (string | null)[] }
  | { label: string; tags: string[]; kind: 'text'; values: [number, string][][] };

export function columnToWire(c: Column): WireColumn {
  switch (c.kind) {
    case 'numeric':
      return { label: c.label, tags: c.tags, kind: 'numeric', values: c.values.map((v) => (v === null || Number.isFinite(v) ? v : String(v))) };
    case 'histogram':
      return { ...c, values: c.values.map((h) => (h === null ? null : histogramToBase64(h))) };
    case 'text':
      return c;
  }
}

export function columnFromWire(w: WireColumn): Column {
  switch (w.kind) {
    case 'numeric':
      return { ...w, values: w.values.map((v) => (typeof v === 'string' ? Number(v) : v)) };
    case 'histogram':
      return { ...w, values: w.values.map((h) => (h === null ? null : histogramFromBase64(h))) };
    case 'text':
      return w;
  }
}
