// What Prometheus' protocols and the PromQL engine read: series chosen by label matchers
// through the (cluster-wide) tag search, and their raw samples from each metric's owner.
// Labels are the metric name (`__name__`) and its stream tags (model/prometheus/labels.ts).
import { deserializeHistogram, histogramFromBase64, histogramToBase64 } from '../../../model/histogram/index.js';
import { metricLabels } from '../../../model/prometheus/labels.js';
import { compileMatcher, matchesAll, requiredValues } from '../../../model/prometheus/matchers.js';
import type { LabelMatcher, Labels, PromValue, SampleSeries, SeriesData } from '../../../model/prometheus/types.js';
import type { PromSource } from '../../../model/promql/source.js';
import { ferr } from '../../../model/errors.js';
import type { AccountId } from '../../../model/types.js';
import { find } from '../find.js';
import type { MetricInfo } from '../../../model/metric-info.js';
import type { NodeApi } from '../../api.js';

/** Most series one selector may choose: each costs a read and its samples' memory. */
export const MAX_SELECTED_SERIES = 50_000;

export interface SeriesRef {
  labels: Labels;
  uuid: string;
  /** Canonical metric name. */
  name: string;
  kind: 'numeric' | 'histogram';
}

export interface SelectScope {
  account: AccountId;
  /** Only this check's metrics (remote read's `<uuid>`); null = the whole account. */
  uuid: string | null;
}

const b64 = (text: string): string => `b[exact]"${Buffer.from(text, 'utf8').toString('base64')}"`;

/** The tag query that narrows candidates: the check and each exact label value (others are checked after). */
function candidateQuery(scope: SelectScope, matchers: readonly LabelMatcher[]): string {
  const leaves = requiredValues(matchers).map(([label, value]) => `${b64(label === '__name__' ? '__name' : label)}:${b64(value)}`);
  if (scope.uuid !== null) leaves.push(`__check_uuid:${scope.uuid}`);
  return leaves.length === 0 ? 'and(*:*)' : `and(${leaves.join(',')})`;
}

/**
 * The numeric and histogram series of the scope that match every matcher and were active
 * in [startMs, endMs]. A series with both kinds of data appears once per kind.
 */
export async function selectSeries(node: NodeApi, scope: SelectScope, matchers: readonly LabelMatcher[], startMs: number, endMs: number): Promise<SeriesRef[]> {
  const compiled = matchers.map(compileMatcher);
  const request = {
    kind: 'tags' as const,
    account: scope.account,
    query: candidateQuery(scope, matchers),
    activityStart: Math.floor(startMs / 1000),
    activityEnd: Math.ceil(endMs / 1000),
    limit: null,
    activity: false,
    latest: 0,
    down: [],
    verifyOwner: false,
  };
  const answer = await find(node, request, false);
  const out: SeriesRef[] = [];
  for (const row of answer.rows) {
    const metric = node.registry.lookup(row.uuid, row.name);
    if (!metric.ok) continue;
    const labels = metricLabels(metric.metric.name);
    if (!matchesAll(compiled, labels)) continue;
    for (const kind of ['numeric', 'histogram'] as const) if (row.types.includes(kind)) out.push({ labels, uuid: row.uuid, name: row.name, kind });
    if (out.length > MAX_SELECTED_SERIES) throw ferr('FER_ERR_TOO_MANY_SERIES', MAX_SELECTED_SERIES);
  }
  return out;
}

/** The series' samples stamped in [startMs, endMs], read on an owner. */
export async function readSamples(node: NodeApi, ref: SeriesRef, startMs: number, endMs: number): Promise<SampleSeries> {
  const found = node.registry.lookup(ref.uuid, ref.name);
  if (!found.ok) return { ts: [], values: [] };
  const metric = found.metric;
  if (node.routing.readsLocally(metric)) return localSamples(node, metric, ref.kind, startMs, endMs);
  const wire = await node.routing.askOwners<WireSamples>(metric, 'prom_samples', { uuid: ref.uuid, name: ref.name, kind: ref.kind, startMs, endMs });
  return fromWire(wire);
}

async function localSamples(node: NodeApi, metric: MetricInfo, kind: SeriesRef['kind'], startMs: number, endMs: number): Promise<SampleSeries> {
  if (!(await node.knows(metric))) return { ts: [], values: [] };
  if (kind === 'histogram') {
    const period = node.config.histogramRollups[0]!.period;
    const rows = await node.shards.about(metric, 'histograms', period, startMs, endMs);
    return { ts: rows.map((r) => r[0]), values: rows.map((r) => deserializeHistogram(r[1])) };
  }
  // `read` takes [start, end); samples at endMs count.
  const rows = await node.shards.about(metric, 'read', 'numeric', startMs, endMs + 1);
  const values = rows.values.map((v): PromValue | null => (v === null || typeof v === 'string' ? null : Number.isFinite(Number(v)) ? Number(v) : null));
  return { ts: rows.ts, values };
}

/** Samples as they cross NATS: histograms as base64 circllhist. */
interface WireSamples {
  ts: number[];
  values: (number | string | null)[];
}

function toWire(s: SampleSeries): WireSamples {
  return { ts: s.ts, values: s.values.map((v) => (v === null || typeof v === 'number' ? v : histogramToBase64(v))) };
}

function fromWire(w: WireSamples): SampleSeries {
  return { ts: w.ts, values: w.values.map((v) => (typeof v === 'string' ? histogramFromBase64(v) : v)) };
}

/** A peer reads samples of a metric it owns for us (never forwarding). */
export async function answerSamples(node: NodeApi, payload: unknown): Promise<WireSamples> {
  const p = payload as { uuid: string; name: string; kind: SeriesRef['kind']; startMs: number; endMs: number };
  const found = node.registry.lookup(p.uuid, p.name);
  if (!found.ok) return { ts: [], values: [] };
  return toWire(await localSamples(node, found.metric, p.kind, p.startMs, p.endMs));
}

/** The PromQL engine's data source over one account (or one check). */
export function promSource(node: NodeApi, scope: SelectScope): PromSource {
  return {
    async select(matchers, startMs, endMs): Promise<SeriesData[]> {
      const refs = await selectSeries(node, scope, matchers, startMs, endMs);
      return Promise.all(refs.map(async (ref) => ({ labels: ref.labels, samples: await readSamples(node, ref, startMs, endMs) })));
    },
  };
}
