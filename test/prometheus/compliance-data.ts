// The data the PromQL compliance test writes to both Prometheus and ferrite: an hour of
// deterministic series (a seeded generator), every 15 s. Each series' samples sit a few hundred
// milliseconds past the second, and the test evaluates at half-seconds, so no sample ever lies on
// a window boundary: Prometheus 2 closes windows on the left, Prometheus 3 (and ferrite) leave
// them open, and that difference is not what this test measures.
import type { Labels } from '../../model/prometheus/types.js';

export const STEP_MS = 15_000;
export const SAMPLES = 240;

export interface GeneratedSeries {
  labels: Labels;
  samples: { timestamp: number; value: number }[];
}

/** A small deterministic generator (an LCG), so every run writes the same values. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Labels with their names in order, as Prometheus' remote-write receiver expects them. */
function sorted(labels: Labels): Labels {
  return Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/**
 * The series for data starting at `startMs` (a whole second). `value(k)` gives sample k's value,
 * or null where the series has no sample (it starts late or stops early).
 */
export function generate(startMs: number): GeneratedSeries[] {
  const out: GeneratedSeries[] = [];
  const rnd = random(20260821);
  const add = (labels: Labels, value: (k: number) => number | null, everyK = 1): void => {
    const jitter = 101 + ((out.length * 37) % 397); // ms past the second: never .500
    const samples: GeneratedSeries['samples'] = [];
    for (let k = 0; k < SAMPLES; k += everyK) {
      const v = value(k);
      if (v !== null) samples.push({ timestamp: startMs + k * STEP_MS + jitter, value: v });
    }
    out.push({ labels: sorted(labels), samples });
  };
  const counter = (start: number, maxStep: number, resetAt = -1): ((k: number) => number) => {
    let v = start;
    const values = Array.from({ length: SAMPLES }, (_, k) => {
      v = k === resetAt ? Math.floor(rnd() * 5) : v + Math.floor(rnd() * maxStep);
      return v;
    });
    return (k) => values[k]!;
  };
  const walk = (start: number, spread: number): ((k: number) => number) => {
    let v = start;
    const values = Array.from({ length: SAMPLES }, () => (v = Math.round((v + (rnd() - 0.5) * spread) * 1000) / 1000));
    return (k) => values[k]!;
  };

  let n = 0;
  for (const job of ['api', 'web']) {
    for (const instance of ['i0', 'i1', 'i2']) {
      for (const method of ['GET', 'POST']) {
        add({ __name__: 'http_requests_total', job, instance, method, code: '200' }, counter(1000 + n * 137, 20, n === 3 ? 130 : -1));
        if (job === 'api') add({ __name__: 'http_requests_total', job, instance, method, code: '500' }, counter(500 + n * 11, 4));
        n++;
      }
      add({ __name__: 'memory_usage_bytes', job, instance }, walk(1e9 + n * 1e7, 4e6));
      add({ __name__: 'up', job, instance }, (k) => (job === 'web' && instance === 'i2' && k > 100 && k < 150 ? 0 : 1));
      add({ __name__: 'build_info', job, instance, version: instance === 'i0' ? '1.2.3' : '1.3.0' }, () => 1);
    }
    const bounds = ['0.05', '0.1', '0.5', '1', '5', '+Inf'];
    const cumulative = bounds.map(() => 0);
    const rows: number[][] = [];
    let sum = 0;
    for (let k = 0; k < SAMPLES; k++) {
      const observations = Math.floor(rnd() * 30);
      for (let o = 0; o < observations; o++) {
        const x = rnd() ** 3 * 8;
        sum += x;
        bounds.forEach((b, i) => {
          if (x <= Number(b === '+Inf' ? Infinity : b)) cumulative[i]!++;
        });
      }
      rows.push([...cumulative, Math.round(sum * 1000) / 1000]);
    }
    bounds.forEach((le, i) => add({ __name__: 'request_duration_seconds_bucket', job, le }, (k) => rows[k]![i]!));
    add({ __name__: 'request_duration_seconds_count', job }, (k) => rows[k]![bounds.length - 1]!);
    add({ __name__: 'request_duration_seconds_sum', job }, (k) => rows[k]![bounds.length]!);
  }
  for (const instance of ['i0', 'i1', 'i2']) {
    for (const zone of ['hot', 'cold']) add({ __name__: 'node_temperature_celsius', instance, zone }, walk(zone === 'hot' ? 60 : -15, 3));
    add({ __name__: 'ratio', instance }, walk(0.5, 0.02));
  }
  add({ __name__: 'queue_length', queue: 'q1' }, walk(100, 10));
  const late = walk(5000, 50);
  add({ __name__: 'queue_length', queue: 'q2' }, (k) => (k >= 80 ? late(k) : null)); // starts 20 minutes in
  const early = walk(300, 20);
  add({ __name__: 'queue_length', queue: 'q3' }, (k) => (k < 200 ? early(k) : null)); // stops 10 minutes before the end
  add({ __name__: 'setpoint' }, walk(42, 1));
  for (const job of ['api', 'web']) add({ __name__: 'errors_total', job }, counter(10_000, 50), 4); // every minute
  return out;
}
