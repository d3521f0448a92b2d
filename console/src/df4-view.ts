// Shows a DF4 answer (/fetch, caql_v1 format=DF4): numeric columns as lines in one chart,
// each histogram column as a heatmap, text columns as a list of events in time order.
import { HeatmapChart, LineChart, type HistogramCell } from './chart.js';
import { fill, h, table } from './dom.js';
import { time } from './format.js';
import type { Df4 } from './types.js';

/** Text events shown at most (the newest are kept). */
const MAX_EVENTS = 500;

export class Df4View {
  readonly el = h('div', { class: 'df4' });
  private lines = new LineChart();
  private heatmaps: HeatmapChart[] = [];

  show(df4: Df4, title: string): void {
    const { start, period, count } = df4.head;
    const x = Array.from({ length: count }, (_, i) => start + i * period);
    const parts: HTMLElement[] = [];
    const numeric = df4.meta.flatMap((m, i) => (m.kind === 'numeric' ? [i] : []));
    if (numeric.length > 0) {
      this.lines.show({ title, series: numeric.map((i) => ({ label: df4.meta[i]!.label })) }, x, numeric.map((i) => df4.data[i] as (number | null)[]));
      parts.push(this.lines.el);
    }
    const histograms = df4.meta.flatMap((m, i) => (m.kind === 'histogram' ? [i] : []));
    while (this.heatmaps.length < histograms.length) this.heatmaps.push(new HeatmapChart());
    histograms.forEach((col, k) => {
      const chart = this.heatmaps[k]!;
      chart.show(`${df4.meta[col]!.label} (histogram)`, x, period, df4.data[col] as HistogramCell[]);
      parts.push(chart.el);
    });
    const text = df4.meta.flatMap((m, i) => (m.kind === 'text' ? [i] : []));
    if (text.length > 0) parts.push(events(df4, x, text));
    if (parts.length === 0) parts.push(h('p', { class: 'note' }, 'No series.'));
    fill(this.el, parts);
  }

  dispose(): void {
    this.lines.dispose();
    this.heatmaps.forEach((c) => c.dispose());
  }
}

/** Text cells are `[[offset_ms_in_slot, "text"], ...]`. */
function events(df4: Df4, x: number[], columns: number[]): HTMLElement {
  const rows: [number, string, string][] = [];
  for (const col of columns) {
    (df4.data[col] as ([number, string][] | null)[]).forEach((cell, i) => {
      for (const [offsetMs, value] of cell ?? []) rows.push([x[i]! + offsetMs / 1000, df4.meta[col]!.label, value]);
    });
  }
  rows.sort((a, b) => b[0] - a[0]);
  return h(
    'div',
    { class: 'events' },
    h('h3', null, `Text events (${rows.length})`),
    table(['time', 'metric', 'value'], rows.slice(0, MAX_EVENTS).map(([t, label, value]) => [time(t), label, h('code', null, value)]), { 'data-testid': 'events' }),
  );
}
