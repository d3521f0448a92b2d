// A metric's name record (CF.metrics) and the postings that find it (CF.index `p` keys).
import { tagSearchText } from '../model/metric-name.js';
import type { AccountId } from '../model/types.js';
import type { MetricInfo } from './metric-info.js';

export interface NameRecord {
  account_id: AccountId;
  uuid: string;
  check_name: string;
  metric_name: string;
}

export function encodeNameRecord(m: MetricInfo): Buffer {
  const record: NameRecord = { account_id: m.accountId, uuid: m.uuid, check_name: m.checkName, metric_name: m.name.canonical };
  return Buffer.from(JSON.stringify(record));
}

export function decodeNameRecord(bytes: Uint8Array): NameRecord {
  return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as NameRecord;
}

/** (category, value) postings of a metric: its name, its check and each stream tag ('' for a category alone). */
export function metricPostings(m: MetricInfo): [string, string][] {
  const out: [string, string][] = [
    ['__name', m.name.name],
    ['__check_uuid', m.uuid],
  ];
  for (const t of m.name.tags) out.push([tagSearchText(t.category), tagSearchText(t.value ?? '')]);
  return out;
}
