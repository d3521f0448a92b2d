// A metric's name record (CF.metrics, keyed by its 16-byte storage id): who the metric is
// and its dense index id. The postings are derived from the canonical name, so this record,
// written in the same batch as the journal entry that first names the metric, is what makes
// the metric findable after a restart.
//
// v2 (binary): 0x02 | dense id (u32 BE) | account (u32 BE) | uuid length (u8) | uuid |
//              check name length (u16 BE) | check name | canonical name (UTF-8, to the end)
// v1 (JSON, before dense ids): {"account_id","uuid","check_name","metric_name"}; given a
// dense id and rewritten as v2 when the index loads.

const V2 = 0x02;

export interface NameRecordFields {
  accountId: number;
  uuid: string;
  checkName: string;
  canonical: string;
}

export interface DecodedNameRecord extends NameRecordFields {
  /** null for a v1 record. */
  denseId: number | null;
}

export function encodeNameRecord(denseId: number, m: NameRecordFields): Buffer {
  const uuid = Buffer.from(m.uuid, 'utf8');
  const check = Buffer.from(m.checkName, 'utf8');
  const canonical = Buffer.from(m.canonical, 'utf8');
  const out = Buffer.allocUnsafe(1 + 4 + 4 + 1 + uuid.length + 2 + check.length + canonical.length);
  let at = out.writeUInt8(V2, 0);
  at = out.writeUInt32BE(denseId, at);
  at = out.writeUInt32BE(m.accountId, at);
  at = out.writeUInt8(uuid.length, at);
  at += uuid.copy(out, at);
  at = out.writeUInt16BE(check.length, at);
  at += check.copy(out, at);
  canonical.copy(out, at);
  return out;
}

export function decodeNameRecord(raw: Uint8Array): DecodedNameRecord {
  const b = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (b[0] !== V2) {
    const v1 = JSON.parse(b.toString('utf8')) as { account_id: number; uuid: string; check_name: string; metric_name: string };
    return { denseId: null, accountId: v1.account_id, uuid: v1.uuid, checkName: v1.check_name, canonical: v1.metric_name };
  }
  const denseId = b.readUInt32BE(1);
  const accountId = b.readUInt32BE(5);
  const uuidEnd = 10 + b[9]!;
  const uuid = b.toString('utf8', 10, uuidEnd);
  const checkEnd = uuidEnd + 2 + b.readUInt16BE(uuidEnd);
  const checkName = b.toString('utf8', uuidEnd + 2, checkEnd);
  return { denseId, accountId, uuid, checkName, canonical: b.toString('utf8', checkEnd) };
}
