// Explorer: an account and a tag query (with suggestions from tag_cats/tag_vals) list the
// matching metrics, a page at a time; the ones ticked are charted over the chosen range
// through /fetch, at a period chosen from the range (a rollup level when it is coarse).
import { ApiError, getJson, postJson } from '../api.js';
import { tagQueryInput } from '../autocomplete.js';
import { LineChart } from '../chart.js';
import { Df4View } from '../df4-view.js';
import { card, errorBox, fill, h, table } from '../dom.js';
import { count, duration } from '../format.js';
import type { Page, PageContext } from '../page.js';
import { gridFor, periodFor, RANGES } from '../period.js';
import type { Df4, FindRow, Overview } from '../types.js';

const PAGE_SIZE = 25;
const MAX_SELECTED = 10;
const PERCENTILES = [10, 50, 90, 99];

type HistogramMode = 'heatmap' | 'bands';

const keyOf = (r: FindRow) => `${r.uuid}\u0000${r.metric_name}`;
const kindsOf = (r: FindRow) => r.type.split(',').map((t) => t.trim());

export function explorerPage(ctx: PageContext): Page {
  const account = h('input', { type: 'text', name: 'account', value: ctx.params.get('account') ?? '1', size: 6, inputmode: 'numeric' });
  const query = tagQueryInput(() => account.value.trim(), { name: 'query', value: ctx.params.get('query') ?? 'and(__name:*)', size: 60 });
  const range = h('select', { name: 'range' }, RANGES.map((r) => h('option', { value: String(r.seconds), selected: String(r.seconds) === (ctx.params.get('range') ?? '3600') }, r.label)));
  const mode = h('select', { name: 'histograms' }, h('option', { value: 'heatmap' }, 'histograms as heatmap'), h('option', { value: 'bands' }, 'histograms as percentile bands'));
  const listing = h('div', { class: 'listing' });
  const chartInfo = h('p', { class: 'note', 'data-testid': 'period' });
  const chartError = h('div');
  const view = new Df4View();
  const bands = h('div');
  const bandCharts: LineChart[] = [];
  let rows: FindRow[] = [];
  let pageNo = 0;
  const selected = new Map<string, FindRow>();
  let rollups: number[] = [60];
  let histogramBase = 60;
  /** Counts chart requests, so an answer overtaken by a later one is dropped. */
  let drawing = 0;

  async function search(event?: Event): Promise<void> {
    event?.preventDefault();
    ctx.setParams({ account: account.value.trim(), query: query.input.value, range: range.value });
    try {
      rows = await getJson<FindRow[]>(`/find/${encodeURIComponent(account.value.trim())}/tags?query=${encodeURIComponent(query.input.value)}&activity=0`);
      pageNo = 0;
      selected.clear();
      renderList();
      await drawCharts();
    } catch (error) {
      rows = [];
      fill(listing, errorBox(error instanceof ApiError ? error.message : String(error)));
    }
  }

  function renderList(): void {
    const pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
    const shown = rows.slice(pageNo * PAGE_SIZE, (pageNo + 1) * PAGE_SIZE);
    const box = (r: FindRow) =>
      h('input', {
        type: 'checkbox',
        checked: selected.has(keyOf(r)),
        'aria-label': `chart ${r.metric_name}`,
        onchange: (e: Event) => {
          const on = (e.target as HTMLInputElement).checked;
          if (on && selected.size >= MAX_SELECTED) {
            (e.target as HTMLInputElement).checked = false;
            return;
          }
          if (on) selected.set(keyOf(r), r);
          else selected.delete(keyOf(r));
          void drawCharts();
        },
      });
    const turn = (to: number) => () => {
      pageNo = to;
      renderList();
    };
    fill(
      listing,
      h('p', null, `${count(rows.length)} metric${rows.length === 1 ? '' : 's'} · tick up to ${MAX_SELECTED} to chart them`),
      table(['', 'metric', 'type', 'check', 'uuid'], shown.map((r) => [box(r), h('span', { class: 'metric-name' }, r.metric_name), r.type, r.check_name, h('code', null, r.uuid)]), { 'data-testid': 'metrics' }),
      h(
        'div',
        { class: 'pager' },
        h('button', { type: 'button', disabled: pageNo === 0, onclick: turn(pageNo - 1) }, '‹ previous'),
        h('span', null, ` page ${pageNo + 1} of ${pages} `),
        h('button', { type: 'button', disabled: pageNo >= pages - 1, onclick: turn(pageNo + 1) }, 'next ›'),
      ),
    );
  }

  async function drawCharts(): Promise<void> {
    const ticket = ++drawing;
    fill(chartError);
    const metrics = [...selected.values()];
    if (metrics.length === 0) {
      fill(chartInfo, 'Tick metrics above to chart them.');
      fill(view.el);
      fill(bands);
      return;
    }
    const rangeS = Number(range.value);
    const histograms = metrics.some((m) => kindsOf(m).includes('histogram'));
    const { period, rollup } = periodFor(rangeS, rollups, histograms ? histogramBase : 0);
    const { start, count: slots } = gridFor(rangeS, period);
    fill(chartInfo, `period ${duration(period)}${rollup ? ' (a rollup level)' : ' (computed from raw samples)'} · ${slots} points`);
    const histMode = mode.value as HistogramMode;
    const streams = metrics.flatMap((m) =>
      kindsOf(m)
        .filter((kind) => kind !== 'histogram' || histMode === 'heatmap')
        .map((kind) => ({ uuid: m.uuid, name: m.metric_name, kind, transform: kind === 'numeric' ? 'average' : 'none', label: m.metric_name })),
    );
    try {
      const document = { start, period, count: slots, streams, reduce: [{ label: '', method: 'pass' }] };
      const df4 = streams.length > 0 ? await postJson<Df4>('/fetch', document) : null;
      if (ticket !== drawing) return; // the selection changed while this was read
      if (df4 !== null) view.show(df4, `${metrics.length} metric(s)`);
      else fill(view.el);
      await drawBands(histMode === 'bands' ? metrics.filter((m) => kindsOf(m).includes('histogram')) : [], start, period, slots, ticket);
    } catch (error) {
      fill(chartError, errorBox(error instanceof ApiError ? error.message : String(error)));
    }
  }

  /** Each histogram metric's percentiles as lines, the 10th–90th filled. */
  async function drawBands(metrics: FindRow[], start: number, period: number, slots: number, ticket: number): Promise<void> {
    while (bandCharts.length < metrics.length) bandCharts.push(new LineChart());
    const charts = await Promise.all(
      metrics.map(async (m, k) => {
        const streams = PERCENTILES.map((p) => ({ uuid: m.uuid, name: m.metric_name, kind: 'histogram', transform: 'percentile', transform_params: [String(p)], label: `p${p}` }));
        const df4 = await postJson<Df4>('/fetch', { start, period, count: slots, streams, reduce: [{ label: '', method: 'pass' }] });
        const x = Array.from({ length: slots }, (_, i) => start + i * period);
        const chart = bandCharts[k]!;
        chart.show({ title: `${m.metric_name} (percentiles)`, series: PERCENTILES.map((p) => ({ label: `p${p}` })), bands: [[3, 1]] }, x, df4.data as (number | null)[][]);
        return chart.el;
      }),
    );
    if (ticket === drawing) fill(bands, charts);
  }

  const el = h(
    'div',
    { class: 'page explorer' },
    card(
      'Find metrics',
      h('form', { class: 'inline', onsubmit: (e: Event) => void search(e) }, h('label', null, 'account ', account), h('label', { class: 'grow' }, 'tag query ', query.el), h('button', { type: 'submit' }, 'Search')),
      listing,
    ),
    card('Chart', h('div', { class: 'inline' }, range, mode), chartInfo, chartError, view.el, bands),
  );
  range.addEventListener('change', () => void drawCharts());
  mode.addEventListener('change', () => void drawCharts());

  void getJson<Overview>('/console/api/overview')
    .then((o) => {
      rollups = o.rollups;
      histogramBase = o.histogram_rollups[0] ?? histogramBase;
    })
    .catch(() => undefined)
    .then(() => search());

  return {
    el,
    // Charts of "the last ..." move with the clock.
    refresh: async () => {
      if (selected.size > 0) await drawCharts();
    },
    refreshMs: 10_000,
    dispose: () => {
      view.dispose();
      bandCharts.forEach((c) => c.dispose());
    },
  };
}
