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
  /** Milliseconds added to every VictoriaMetrics timestamp (bench/reads: its windows end-inclusive, ferrite's start-inclusive). */
  vmOffsetMs?: number;
}

export const UUID = '1b988fd7-d1e1-48ec-848e-55709511d43f';
const CHECK = `bench.example\`bench\`c_1_1::bench\`${UUID}`;

/** Sample i of metric m: a slowly varying gauge, so compression sees realistic data. */
export const valueOf = (m: number, i: number) => Math.round((50 + 40 * Math.sin((m + i) / 17)) * 1000) / 1000;
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

/** Request bodies made when sent, so a run of millions of samples never holds them all. */
export interface Bodies {
  length: number;
  at(i: number): string | Uint8Array;
}

/** The (metric, point) pairs of batch `b`, in submission order: every metric's point 0, then point 1, … */
function batchAt(d: Dataset, b: number): [number, number][] {
  const out: [number, number][] = [];
  const end = Math.min((b + 1) * d.batch, d.metrics * d.points);
  for (let k = b * d.batch; k < end; k++) out.push([k % d.metrics, Math.floor(k / d.metrics)]);
  return out;
}

const lazy = (d: Dataset, body: (batch: [number, number][]) => string | Uint8Array): Bodies => ({
  length: Math.ceil((d.metrics * d.points) / d.batch),
  at: (b) => body(batchAt(d, b)),
});

const all = (b: Bodies): (string | Uint8Array)[] => Array.from({ length: b.length }, (_, i) => b.at(i));

/**
 * The bodies made before the clock starts, so the client's encoding (a FlatBuffer Builder costs
 * more CPU than the server spends on the body) does not compete with the server being measured.
 */
export function prepared(b: Bodies): Bodies {
  // As bytes: a string body is encoded again on every send.
  const list = all(b).map((x) => (typeof x === 'string' ? Buffer.from(x) : x));
  return { length: list.length, at: (i) => list[i]! };
}

const tsvLine = (d: Dataset) => (m: number, i: number) => `M\t${d.start + i * d.stepS}.000\t${CHECK}\t${ferriteName(m, d.family)}\tn\t${valueOf(m, i)}`;
const vmLine = (d: Dataset) => (m: number, i: number) => `${vmSeries(m, d.family)} ${valueOf(m, i)} ${(d.start + i * d.stepS) * 1000 + (d.vmOffsetMs ?? 0)}`;

export const ferriteBodiesLazy = (d: Dataset): Bodies => lazy(d, (b) => b.map(([m, i]) => tsvLine(d)(m, i)).join('\n'));
export const vmBodiesLazy = (d: Dataset): Bodies => lazy(d, (b) => `${b.map(([m, i]) => vmLine(d)(m, i)).join('\n')}\n`);
export const ferriteBodies = (d: Dataset): string[] => all(ferriteBodiesLazy(d)) as string[];
export const vmBodies = (d: Dataset): string[] => all(vmBodiesLazy(d)) as string[];

const UUID_BYTES = Buffer.from(UUID.replace(/-/g, ''), 'hex');

/** The same samples as v2 MetricLists (`CMLS`): one MetricValue per sample, tags in `stream_tags`. */
export const metricListBodiesLazy = (d: Dataset): Bodies =>
  lazy(d, (batch) => {
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

export const metricListBodies = (d: Dataset): Uint8Array[] => all(metricListBodiesLazy(d)) as Uint8Array[];

/**
 * Sends the bodies with `concurrency` requests in flight; any non-2xx answer fails the run, except
 * that with `waitOutRefusals` a 503 (load shedding) is sent again after its Retry-After, as a
 * scraper or remote writer would. Resolves with the number of refusals waited out.
 */
export async function send(url: string, list: readonly (string | Uint8Array)[] | Bodies, concurrency: number, method: string, headers: Record<string, string> = {}, waitOutRefusals = false): Promise<number> {
  let next = 0;
  let refused = 0;
  const at = Array.isArray(list) ? (i: number) => list[i]! : (list as Bodies).at;
  const worker = async () => {
    while (next < list.length) {
      const body = at(next++);
      for (;;) {
        const res = await fetch(url, { method, body, headers });
        const text = await res.text();
        if (res.status < 300) break;
        if (res.status !== 503 || !waitOutRefusals) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 200)}`);
        refused++;
        await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return refused;
}
