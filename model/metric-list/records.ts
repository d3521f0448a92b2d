// Decoded MetricList samples → ingest records, with the same per-record rules as TSV:
// resolvable names, clock skew, text size limit. A bad sample is that sample's error.
import { Histogram, histogramToBase64 } from '../histogram/index.js';
import type { IngestRecord, RecordError } from '../ingest-record.js';
import type { ItemResolver } from '../json-items.js';
import type { AccountId, EpochMs } from '../types.js';
import type { DecodedMetricList, DecodedSample } from './decode.js';

export interface MetricListContext<M> {
  resolve: ItemResolver<M>;
  latestAllowed: EpochMs;
  textSizeLimit: number;
}

export function metricListRecords<M>(list: DecodedMetricList, ctx: MetricListContext<M>): { records: IngestRecord<M>[]; errors: RecordError[] } {
  const records: IngestRecord<M>[] = [];
  const errors: RecordError[] = list.skipped.map((s) => ({ at: s.index, reason: s.reason }));
  list.samples.forEach((s, i) => {
    const r = toRecord(s, ctx);
    if (typeof r === 'string') errors.push({ at: i, reason: r });
    else records.push(r);
  });
  return { records, errors };
}

function toRecord<M>(s: DecodedSample, ctx: MetricListContext<M>): IngestRecord<M> | string {
  if (s.ts > ctx.latestAllowed) return `sample of '${s.name}' at ${s.ts} ms is further in the future than the allowed clock skew`;
  // account_id is a signed int32 on the wire; account ids are non-negative (storage keys write them unsigned).
  if (s.accountId < 0) return `account_id ${s.accountId} of '${s.name}' is negative`;
  const resolved = ctx.resolve(s.accountId as AccountId, s.checkUuid!, s.checkName, s.name);
  if (!resolved.ok) return resolved.reason;
  const metric = resolved.metric;
  const ts = s.ts as EpochMs;
  switch (s.value.kind) {
    case 'numeric':
      return s.generation === 0 ? { kind: 'numeric', metric, ts, value: s.value.value } : { kind: 'numeric', metric, ts, value: s.value.value, generation: s.generation };
    case 'text': {
      const v = s.value.value;
      return { kind: 'text', metric, ts, value: v !== null && v.length > ctx.textSizeLimit ? v.slice(0, ctx.textSizeLimit) : v };
    }
    case 'histogram': {
      // An absent histogram is an explicit null point: nothing to merge.
      const h = Histogram.empty();
      for (const b of s.value.bins ?? []) {
        // In MetricLists |val| < 10 marks the zero bin.
        const bin = Math.abs(b.val) < 10 ? { val: 0, exp: 0 } : { val: b.val, exp: b.exp };
        if (b.count > 0n) h.insertBin(bin, b.count);
      }
      const record: IngestRecord<M> = { kind: 'histogram', metric, ts, value: histogramToBase64(h) };
      if (s.value.cumulative) record.cumulative = true;
      return record;
    }
  }
}
