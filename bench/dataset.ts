// The generated gauges every numeric benchmark uses, written for ferrite (TSV `M` records)
// and for VictoriaMetrics (Prometheus text), so both systems store the same samples.

export interface Dataset {
  metrics: number;
  points: number;
  /** Seconds between points. */
  stepS: number;
  /** Epoch seconds of the first point. */
  start: number;
  /** Lines per request body. */
  batch: number;
}

export const UUID = '1b988fd7-d1e1-48ec-848e-55709511d43f';
const CHECK = `bench.example\`bench\`c_1_1::bench\`${UUID}`;

/** Sample i of metric m: a slowly varying gauge, so compression sees realistic data. */
const valueOf = (m: number, i: number) => Math.round((50 + 40 * Math.sin((m + i) / 17)) * 1000) / 1000;
const tags = (m: number) => ({ host: `h${m % 100}`, region: `r${m % 5}` });

/** ferrite's canonical name of metric m. */
export function ferriteName(m: number): string {
  const t = tags(m);
  return `bench.metric.${m}|ST[host:${t.host},region:${t.region}]`;
}

/** VictoriaMetrics' series selector of metric m. */
export function vmSeries(m: number): string {
  const t = tags(m);
  return `bench_metric_${m}{host="${t.host}",region="${t.region}"}`;
}

function bodies(d: Dataset, line: (m: number, i: number) => string, trailer: string): string[] {
  const out: string[] = [];
  let lines: string[] = [];
  for (let i = 0; i < d.points; i++) {
    for (let m = 0; m < d.metrics; m++) {
      lines.push(line(m, i));
      if (lines.length === d.batch) {
        out.push(lines.join('\n') + trailer);
        lines = [];
      }
    }
  }
  if (lines.length) out.push(lines.join('\n') + trailer);
  return out;
}

export const ferriteBodies = (d: Dataset): string[] =>
  bodies(d, (m, i) => `M\t${d.start + i * d.stepS}.000\t${CHECK}\t${ferriteName(m)}\tn\t${valueOf(m, i)}`, '');

export const vmBodies = (d: Dataset): string[] => bodies(d, (m, i) => `${vmSeries(m)} ${valueOf(m, i)} ${(d.start + i * d.stepS) * 1000}`, '\n');

/** Sends the bodies with `concurrency` requests in flight; any non-2xx answer fails the run. */
export async function send(url: string, list: string[], concurrency: number, method: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < list.length) {
      const body = list[next++]!;
      const res = await fetch(url, { method, body });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}
