// The generated gauges every numeric benchmark uses, written for ferrite (TSV `M` records,
// or v2 FlatBuffer MetricLists) and for VictoriaMetrics (Prometheus text), so both systems
// store the same samples.
import * as flatbuffers from 'flatbuffers';
import * as V2 from '../model/metric-list/generated/v2/metric_list_v2_generated.js';

export interface Dataset {
  metrics: number;
  points: number;
  /** Seconds between points. */
  stepS: number;
  /** Epoch seconds of the first point. */
  start: number;
  /** Lines per request body. */
  batch: number;
  /** Name family: metric m is `bench.<family>.<m>` (ferrite) and `bench_<family>_<m>` (VictoriaMetrics). Default `metric`. */
  family?: string;
}

export const UUID = '1b988fd7-d1e1-48ec-848e-55709511d43f';
const CHECK = `bench.example\`bench\`c_1_1::bench\`${UUID}`;

/** Sample i of metric m: a slowly varying gauge, so compression sees realistic data. */
const valueOf = (m: number, i: number) => Math.round((50 + 40 * Math.sin((m + i) / 17)) * 1000) / 1000;
const tags = (m: number) => ({ host: `h${m % 100}`, region: `r${m % 5}` });

/** ferrite's canonical name of metric m. */
export function ferriteName(m: number, family = 'metric'): string {
  const t = tags(m);
  return `bench.${family}.${m}|ST[host:${t.host},region:${t.region}]`;
}

/** VictoriaMetrics' series selector of metric m. */
export function vmSeries(m: number, family = 'metric'): string {
  const t = tags(m);
  return `bench_${family}_${m}{host="${t.host}",region="${t.region}"}`;
}

/** Every (metric, point) in submission order, cut into request-sized batches. */
function batches(d: Dataset): [number, number][][] {
  const out: [number, number][][] = [];
  let batch: [number, number][] = [];
  for (let i = 0; i < d.points; i++) {
    for (let m = 0; m < d.metrics; m++) {
      batch.push([m, i]);
      if (batch.length < d.batch) continue;
      out.push(batch);
      batch = [];
    }
  }
  if (batch.length) out.push(batch);
  return out;
}

const bodies = (d: Dataset, line: (m: number, i: number) => string, trailer: string): string[] =>
  batches(d).map((b) => b.map(([m, i]) => line(m, i)).join('\n') + trailer);

export const ferriteBodies = (d: Dataset): string[] =>
  bodies(d, (m, i) => `M\t${d.start + i * d.stepS}.000\t${CHECK}\t${ferriteName(m, d.family)}\tn\t${valueOf(m, i)}`, '');

export const vmBodies = (d: Dataset): string[] => bodies(d, (m, i) => `${vmSeries(m, d.family)} ${valueOf(m, i)} ${(d.start + i * d.stepS) * 1000}`, '\n');

const UUID_BYTES = Buffer.from(UUID.replace(/-/g, ''), 'hex');

/** The same samples as v2 MetricLists (`CMLS`): one MetricValue per sample, tags in `stream_tags`. */
export const metricListBodies = (d: Dataset): Uint8Array[] =>
  batches(d).map((batch) => {
    const b = new flatbuffers.Builder(batch.length * 160);
    const check = b.createString('bench.example`bench`c_1_1::bench');
    const metrics = batch.map(([m, i]) => {
      const t = tags(m);
      const value = V2.DoubleValue.createDoubleValue(b, valueOf(m, i));
      const sample = V2.MetricSample.createMetricSample(b, BigInt((d.start + i * d.stepS) * 1000), V2.MetricValueUnion.DoubleValue, value, 0);
      const streamTags = V2.MetricValue.createStreamTagsVector(b, [b.createString(`host:${t.host}`), b.createString(`region:${t.region}`)]);
      const mv = V2.MetricValue.createMetricValue(b, b.createString(`bench.metric.${m}`), streamTags, V2.MetricValue.createSamplesVector(b, [sample]));
      const uuid = V2.Metric.createCheckUuidVector(b, UUID_BYTES);
      V2.Metric.startMetric(b);
      V2.Metric.addTimestamp(b, 0n);
      V2.Metric.addCheckName(b, check);
      V2.Metric.addCheckUuid(b, uuid);
      V2.Metric.addAccountId(b, 1);
      V2.Metric.addValue(b, mv);
      return V2.Metric.endMetric(b);
    });
    V2.MetricList.finishMetricListBuffer(b, V2.MetricList.createMetricList(b, V2.MetricList.createMetricsVector(b, metrics)));
    return b.asUint8Array().slice();
  });

/** Sends the bodies with `concurrency` requests in flight; any non-2xx answer fails the run. */
export async function send(url: string, list: readonly (string | Uint8Array)[], concurrency: number, method: string, headers: Record<string, string> = {}): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < list.length) {
      const body = list[next++]!;
      const res = await fetch(url, { method, body, headers });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}
