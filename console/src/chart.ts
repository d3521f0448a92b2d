// Time-series charts on uPlot: lines (one y scale per unit), percentile bands, and a
// histogram heatmap drawn in a uPlot draw hook. Each chart's element carries what it drew
// (data-series, data-points, data-max, data-cells), which the browser tests read besides
// the pixels.
import uPlot from 'uplot';
import { h } from './dom.js';

export const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777', '#4f46e5', '#65a30d'];

export interface SeriesSpec {
  label: string;
  /** The y scale (and axis) the series is drawn against; 'y' unless given. */
  scale?: string;
  color?: string;
}

export interface AxisSpec {
  scale: string;
  side: 'left' | 'right';
  format?: (v: number) => string;
}

export interface LineChartSpec {
  title: string;
  series: SeriesSpec[];
  axes?: AxisSpec[];
  /** Fill between two series, by their 1-based index in `series` (uPlot's numbering). */
  bands?: [number, number][];
  height?: number;
}

const DEFAULT_HEIGHT = 220;

/** A chart whose plot is rebuilt only when its shape (series, axes) changes. */
abstract class Chart {
  readonly el: HTMLElement;
  protected plot: uPlot | null = null;
  private shape = '';

  constructor() {
    this.el = h('div', { class: 'chart' });
    new ResizeObserver(() => this.plot?.setSize({ width: this.width(), height: this.plot.height })).observe(this.el);
  }

  protected width(): number {
    return Math.max(320, this.el.clientWidth || 800);
  }

  protected draw(shape: string, options: () => uPlot.Options, data: uPlot.AlignedData): void {
    if (this.plot !== null && shape === this.shape) {
      this.plot.setData(data);
      return;
    }
    this.plot?.destroy();
    this.el.replaceChildren();
    this.shape = shape;
    this.plot = new uPlot(options(), data, this.el);
  }

  dispose(): void {
    this.plot?.destroy();
    this.plot = null;
  }
}

export class LineChart extends Chart {
  show(spec: LineChartSpec, x: number[], ys: (number | null)[][]): void {
    const shape = JSON.stringify([spec.title, spec.series, spec.axes?.map((a) => [a.scale, a.side]), spec.bands]);
    this.draw(shape, () => this.options(spec), [x, ...ys] as uPlot.AlignedData);
    this.el.dataset.series = String(ys.length);
    const finite = ys.flatMap((y) => y.filter((v): v is number => v !== null && Number.isFinite(v)));
    this.el.dataset.points = String(finite.length);
    this.el.dataset.max = String(finite.reduce((a, b) => Math.max(a, b), -Infinity));
  }

  private options(spec: LineChartSpec): uPlot.Options {
    const axes = spec.axes ?? [{ scale: 'y', side: 'left' }];
    return {
      title: spec.title,
      width: this.width(),
      height: spec.height ?? DEFAULT_HEIGHT,
      scales: { x: { time: true } },
      series: [
        {},
        ...spec.series.map((s, i) => ({ label: s.label, scale: s.scale ?? 'y', stroke: s.color ?? PALETTE[i % PALETTE.length], width: 1.5, spanGaps: true })),
      ],
      axes: [
        {},
        ...axes.map((a) => ({
          scale: a.scale,
          side: a.side === 'left' ? 3 : 1,
          size: 70,
          grid: { show: a.side === 'left' },
          ...(a.format ? { values: (_u: uPlot, ticks: number[]) => ticks.map(a.format!) } : {}),
        })),
      ],
      bands: (spec.bands ?? []).map(([hi, lo]) => ({ series: [hi, lo] as [number, number], fill: 'rgba(37, 99, 235, 0.15)' })),
      legend: { show: true },
    };
  }
}

/** One column of a histogram heatmap: `{"<bin>": count}` per slot, or null. */
export type HistogramCell = Record<string, number> | null;

interface Bin {
  x0: number;
  x1: number;
  lo: number;
  hi: number;
  count: number;
}

export class HeatmapChart extends Chart {
  private bins: Bin[] = [];
  private maxCount = 1;

  show(title: string, x: number[], periodS: number, cells: HistogramCell[]): void {
    this.bins = binsOf(x, periodS, cells);
    this.maxCount = Math.max(1, ...this.bins.map((b) => b.count));
    const lo = Math.min(...this.bins.map((b) => b.lo));
    const hi = Math.max(...this.bins.map((b) => b.hi));
    const empty = this.bins.length === 0;
    const log = !empty && lo > 0 && hi / lo > 100;
    const range: [number, number] = empty ? [0, 1] : [lo, hi > lo ? hi : lo + 1];
    const xRange: [number, number] = [x[0] ?? 0, (x[x.length - 1] ?? 0) + periodS];
    const shape = JSON.stringify([title, range, xRange, log]);
    this.draw(shape, () => this.options(title, xRange, range, log), [x, x.map(() => null)]);
    this.plot?.redraw();
    this.el.dataset.series = '1';
    this.el.dataset.cells = String(this.bins.length);
  }

  private options(title: string, xRange: [number, number], yRange: [number, number], log: boolean): uPlot.Options {
    return {
      title,
      width: this.width(),
      height: DEFAULT_HEIGHT,
      scales: { x: { time: true, range: xRange }, y: { range: yRange, distr: log ? 3 : 1 } },
      series: [{}, { label: 'samples per bin', stroke: '#ea580c', points: { show: false } }],
      axes: [{}, { size: 70 }],
      hooks: { draw: [(u: uPlot) => this.paint(u)] },
      legend: { show: true },
    };
  }

  /** Each bin a rectangle, darker with more samples (log of the count). */
  private paint(u: uPlot): void {
    const { ctx, bbox } = u;
    ctx.save();
    ctx.beginPath();
    ctx.rect(bbox.left, bbox.top, bbox.width, bbox.height);
    ctx.clip();
    const top = Math.log1p(this.maxCount);
    for (const b of this.bins) {
      const x0 = u.valToPos(b.x0, 'x', true);
      const x1 = u.valToPos(b.x1, 'x', true);
      const y0 = u.valToPos(b.lo, 'y', true);
      const y1 = u.valToPos(b.hi, 'y', true);
      const strength = 0.2 + (0.8 * Math.log1p(b.count)) / top;
      ctx.fillStyle = `rgba(234, 88, 12, ${strength.toFixed(3)})`;
      ctx.fillRect(x0, Math.min(y0, y1), Math.max(1, x1 - x0 - 1), Math.max(2, Math.abs(y1 - y0)));
    }
    ctx.restore();
  }
}

/** The bins of every slot: a label `+12e-004` is the bin [0.0012, 0.0013); `0` the zero bin. */
function binsOf(x: number[], periodS: number, cells: HistogramCell[]): Bin[] {
  const out: Bin[] = [];
  cells.forEach((cell, i) => {
    for (const [label, count] of Object.entries(cell ?? {})) {
      const v = Number(label);
      if (!Number.isFinite(v) || count <= 0) continue;
      const width = v === 0 ? 0 : 10 ** (Math.floor(Math.log10(Math.abs(v))) - 1);
      const [lo, hi] = v >= 0 ? [v, v + width] : [v - width, v];
      out.push({ x0: x[i]!, x1: x[i]! + periodS, lo, hi, count });
    }
  });
  return out;
}
