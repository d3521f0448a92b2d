// Runs a validated fetch plan (model/fetch) against this node: each stream is read by its
// shard in the resolution that serves the slots and transformed there into a column, and the
// columns go through the reducers. Streams are read concurrently. A plan whose first reducer
// is a sum, mean or groupby of numeric streams is pushed down: each shard folds the streams it
// holds into partial sums while reading, and the node adds up the partials (and the streams
// other nodes own, read from them).
import { checkDeadline, withinDeadline } from '../../model/deadline.js';
import { commonTags, type Column, type NumericColumn } from '../../model/fetch/column.js';
import { numericCellsJson } from '../../model/fetch/df4.js';
import { FetchRequestError } from '../../model/fetch/errors.js';
import { histogramCell, HISTOGRAM_TRANSFORMS } from '../../model/fetch/histogram.js';
import { applyReducers, CellSums, groupBy, nameOf, type ReduceSpec } from '../../model/fetch/reduce.js';
import type { FetchPlan, StreamSpec } from '../../model/fetch/request.js';
import { textCounts, type TextSlots } from '../../model/fetch/text.js';
import { deserializeHistogram, type Histogram } from '../../model/histogram/index.js';
import { tagText } from '../../model/metric-name.js';
import { readMetric, type MetricInfo, type ReadMetric } from '../../model/metric-info.js';
import type { NodeApi } from '../api.js';
import { columnFromWire, columnToWire, type WireColumn } from '../../model/fetch/column-wire.js';

const SECOND = 1000;

/**
 * Reads, transforms and reduces a plan's streams. Past `deadline` (epoch ms) it answers a
 * 504 at once; reads already queued still finish (the cell cap bounds them), reducers do not run.
 */
export function runFetch(node: NodeApi, plan: FetchPlan, deadline = Infinity, o: { json?: boolean } = {}): Promise<Column[]> {
  const work = (async () => {
    const first = plan.reduce[0];
    if (first !== undefined && FOLDS[first.method] !== undefined && plan.streams.every((s) => s.kind === 'numeric')) {
      const columns = await foldStreams(node, plan, first);
      checkDeadline(deadline, 'the fetch');
      return applyReducers(columns, plan.reduce.slice(1), plan.count);
    }
    const columns = await streamColumns(node, plan, o.json === true && plan.reduce.every((r) => r.method === 'pass'));
    checkDeadline(deadline, 'the fetch');
    return applyReducers(columns, plan.reduce, plan.count);
  })();
  return deadline === Infinity ? work : withinDeadline(work, deadline, 'the fetch');
}

/**
 * The streams of a plan whose answer may be kept for the next identical request
 * (actors/coordinators/fetch-answers.ts): all numeric and read on this node; else null.
 */
export function keepableStreams(node: NodeApi, plan: FetchPlan): ReadMetric[] | null {
  if (plan.streams.some((s) => s.kind !== 'numeric')) return null;
  const metrics = plan.streams.map((s, i) => streamMetric(node, s, `streams[${i}]`));
  return metrics.every((m) => node.routing.readsLocally(m)) ? metrics.map(readMetric) : null;
}

/** The reducers a shard can fold streams for, and how each slot of a group combines. */
const FOLDS: Partial<Record<ReduceSpec['method'], 'sum' | 'mean'>> = { sum: 'sum', mean: 'mean', groupby_sum: 'sum', groupby_mean: 'mean' };

/**
 * A sum, mean or groupby of numeric streams: the shards fold the streams they hold (in one
 * request each), other nodes' streams are read whole, and the partial sums are added up.
 */
async function foldStreams(node: NodeApi, plan: FetchPlan, reduce: ReduceSpec): Promise<Column[]> {
  const streams = plan.streams.map((s, i) => {
    const metric = streamMetric(node, s, `streams[${i}]`);
    return { s, metric, tags: headOf(s, metric).tags, group: 0 };
  });
  const groups: [string, typeof streams][] = reduce.method.startsWith('groupby_') ? groupBy(streams, reduce) : [[nameOf(reduce), streams]];
  groups.forEach(([, members], g) => members.forEach((m) => (m.group = g)));
  const slots = { startMs: plan.startMs, periodMs: plan.periodMs, count: plan.count };
  const sums = new CellSums(groups.length, plan.count);
  const local = streams.filter((x) => node.routing.readsLocally(x.metric));
  const partials = [...node.shards.byShard(local, (x) => x.metric.partition)].map(([n, list]) =>
    node.shards.askShard(n, 'foldNumeric', list.map((x) => ({ metric: readMetric(x.metric), transform: x.s.transform.name, group: x.group })), slots, groups.length),
  );
  const remote = streams.filter((x) => !node.routing.readsLocally(x.metric)).map(async (x) => ({ group: x.group, column: await streamColumn(node, plan, x.s, 'stream') }));
  for (const partial of await Promise.all(partials)) sums.merge(partial);
  for (const { group, column } of await Promise.all(remote)) sums.add(group, column.values as (number | null)[]);
  const how = FOLDS[reduce.method]!;
  return groups.map(([label, members], g) => sums.column(g, label, how, commonTags(members), members.length));
}

/** Streams one question to a shard reads; the next batch is asked before the last one is turned into columns. */
const READ_BATCH = 64;

/**
 * Every stream's column. The numeric streams this node holds are read a batch per question to
 * their shard (a fetch of a thousand streams is tens of messages, not a thousand), the next
 * batch asked while this thread turns the last into columns — and, with `renderJson`, into
 * DF4 JSON (a third of a 100-stream read's time once the shard's part got faster: issue 31),
 * so the two threads work side by side. Other streams are read one by one.
 */
async function streamColumns(node: NodeApi, plan: FetchPlan, renderJson: boolean): Promise<Column[]> {
  const metrics = plan.streams.map((s, i) => (s.kind === 'numeric' ? streamMetric(node, s, `streams[${i}]`) : null));
  const local = plan.streams.flatMap((_, i) => (metrics[i] !== null && node.routing.readsLocally(metrics[i]!) ? [i] : []));
  const slots = { startMs: plan.startMs, periodMs: plan.periodMs, count: plan.count };
  const columns = new Map<number, Column>();
  const ask = (n: number, batch: number[]) => node.shards.askShard(n, 'numericCellsMany', batch.map((i) => ({ metric: readMetric(metrics[i]!), transform: plan.streams[i]!.transform.name })), slots);
  const asked = [...node.shards.byShard(local, (i) => metrics[i]!.partition)].flatMap(([n, list]) =>
    batchesOf(list, READ_BATCH).map(async (batch) => {
      const got = await ask(n, batch);
      batch.forEach((i, k) => {
        const cells = got.subarray(k * plan.count, (k + 1) * plan.count);
        const column = numericColumn(plan, plan.streams[i]!, metrics[i]!, cells);
        if (renderJson) column.json = numericCellsJson(cells);
        columns.set(i, column);
      });
    }),
  );
  await Promise.all(asked);
  return Promise.all(plan.streams.map((s, i) => columns.get(i) ?? streamColumn(node, plan, s, `streams[${i}]`)));
}

function batchesOf<T>(items: readonly T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, b) => items.slice(b * size, (b + 1) * size));
}

/** The stream's transformed values per slot (NaN: none), read by its shard; null when never stored here. */
function numericSlots(node: NodeApi, plan: FetchPlan, s: StreamSpec, metric: MetricInfo): Promise<Float64Array | null> {
  return node.shards.about(metric, 'numericCells', { startMs: plan.startMs, periodMs: plan.periodMs, count: plan.count }, s.transform.name);
}

/**
 * A numeric stream's column from its cells (null: never stored here). Its values are made when
 * first asked for: a JSON answer of passed streams renders the cells and never asks.
 */
function numericColumn(plan: FetchPlan, s: StreamSpec, metric: MetricInfo, cells: Float64Array | null): NumericColumn {
  let values: (number | null)[] | null = null;
  return {
    ...headOf(s, metric),
    kind: 'numeric',
    get values() {
      if (values === null) {
        values = new Array<number | null>(plan.count).fill(null);
        if (cells !== null) for (let i = 0; i < plan.count; i++) if (!Number.isNaN(cells[i]!)) values[i] = cells[i]!;
      }
      return values;
    },
  };
}

const headOf = (s: StreamSpec, metric: MetricInfo) => ({ label: s.label ?? metric.name.canonical, tags: tagsOf(s.uuid, metric) });

/**
 * A stream's tags, kept per metric (frozen: every read of the metric shares them, and DF4 JSON
 * keeps their text: model/fetch/df4.ts) for the uuid spelling the last read used.
 */
const keptTags = new WeakMap<MetricInfo, { uuid: string; tags: string[] }>();

function tagsOf(uuid: string, metric: MetricInfo): string[] {
  const kept = keptTags.get(metric);
  if (kept?.uuid === uuid) return kept.tags;
  const tags = Object.freeze([`__check_uuid:${uuid}`, `__name:${metric.name.name}`, ...metric.name.tags.map(tagText)]) as string[];
  keptTags.set(metric, { uuid, tags });
  return tags;
}

/** Slot geometry of a plan. */
export const endOf = (p: FetchPlan): number => p.startMs + p.count * p.periodMs;
const slotOf = (p: FetchPlan, ts: number): number => Math.floor((ts - p.startMs) / p.periodMs);

/** What a peer needs to read one stream for us. */
interface StreamRequest {
  plan: Pick<FetchPlan, 'startMs' | 'periodMs' | 'count'>;
  stream: StreamSpec;
}

/** A peer owning some streams of a fetch reads them (and only them, never forwarding). */
export async function answerStreamRequest(node: NodeApi, payload: unknown): Promise<WireColumn> {
  const { plan, stream } = payload as StreamRequest;
  const metric = streamMetric(node, stream, 'stream');
  return columnToWire(await localColumn(node, { ...plan, streams: [stream], reduce: [] }, stream, metric));
}

/**
 * Streams already resolved, by their spec: a request's plan is resolved by `keepableStreams` and
 * again by the read (two registry lookups a stream, ≈ 1.3 ms of a 1000-stream read).
 */
const resolved = new WeakMap<StreamSpec, MetricInfo>();

function streamMetric(node: NodeApi, s: StreamSpec, path: string): MetricInfo {
  const known = resolved.get(s);
  if (known !== undefined) return known;
  const found = node.registry.lookup(s.uuid, s.name);
  if (!found.ok) throw new FetchRequestError(`${path}.name`, found.reason);
  resolved.set(s, found.metric);
  return found.metric;
}

async function streamColumn(node: NodeApi, plan: FetchPlan, s: StreamSpec, path: string): Promise<Column> {
  const metric = streamMetric(node, s, path);
  if (node.routing.readsLocally(metric)) return localColumn(node, plan, s, metric);
  const request: StreamRequest = { plan: { startMs: plan.startMs, periodMs: plan.periodMs, count: plan.count }, stream: s };
  const wire = await node.routing.askOwners<WireColumn>(metric, 'stream', request);
  return columnFromWire(wire);
}

async function localColumn(node: NodeApi, plan: FetchPlan, s: StreamSpec, metric: MetricInfo): Promise<Column> {
  const head = headOf(s, metric);
  const periodS = plan.periodMs / SECOND;
  const known = () => node.knows(metric);
  switch (s.kind) {
    case 'numeric':
      return numericColumn(plan, s, metric, await numericSlots(node, plan, s, metric));
    case 'histogram': {
      const slots = (await known()) ? await histogramSlots(node, metric, plan) : new Array<Histogram | null>(plan.count).fill(null);
      const t = HISTOGRAM_TRANSFORMS[s.transform.name];
      if (t === null || t === undefined) return { ...head, kind: 'histogram', values: slots };
      return { ...head, kind: 'numeric', values: slots.map((h) => histogramCell(t, h, s.transform.param, periodS)) };
    }
    case 'text': {
      const slots = (await known()) ? await textSlots(node, metric, plan) : Array.from({ length: plan.count }, () => []);
      if (s.transform.name !== 'none') return { ...head, kind: 'numeric', values: textCounts(s.transform.name, slots, periodS) };
      const values = slots.map((entries, i) => entries.map(([ts, v]): [number, string] => [ts - (plan.startMs + i * plan.periodMs), v]));
      return { ...head, kind: 'text', values };
    }
  }
}

/**
 * The slot histograms, read from the coarsest histogram rollup that divides both the period
 * and the start (exact), else from the finest, whose periods land in the slot holding their start.
 */
async function histogramSlots(node: NodeApi, metric: MetricInfo, plan: FetchPlan): Promise<(Histogram | null)[]> {
  const levels = node.config.histogramRollups.map((l) => l.period);
  const exact = [...levels].reverse().find((p) => plan.periodMs % (p * SECOND) === 0 && plan.startMs % (p * SECOND) === 0);
  const rows = await node.shards.about(metric, 'histograms', exact ?? levels[0]!, plan.startMs, endOf(plan) - 1);
  const slots = new Array<Histogram | null>(plan.count).fill(null);
  for (const [ts, bytes] of rows) {
    const h = deserializeHistogram(bytes);
    const i = slotOf(plan, ts);
    if (i < 0 || i >= plan.count) continue;
    slots[i] = slots[i] === null ? h : slots[i]!.clone().merge(h);
  }
  return slots;
}

async function textSlots(node: NodeApi, metric: MetricInfo, plan: FetchPlan): Promise<TextSlots> {
  const rows = await node.shards.about(metric, 'readText', { start: plan.startMs, end: endOf(plan), specificRange: true, lead: false });
  const slots: TextSlots = Array.from({ length: plan.count }, () => []);
  for (const [ts, v] of rows) if (v !== null) slots[slotOf(plan, ts)]?.push([ts, v]);
  return slots;
}
