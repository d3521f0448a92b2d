// A metric's name record (CF.metrics, keyed by its 16-byte storage id): who the metric is,
// its dense index id and the data types it was first written with. The postings are derived
// from the canonical name, so this record, written in the same batch as the journal entry
// that first names the metric, is what makes the metric findable after a restart.
//
// v3 (binary): 0x03 | dense id (u32 BE) | type bits (u8) | account (u32 BE) | uuid | check
//              name length (u16 BE) | check name | canonical name (UTF-8, to the end)
//              where uuid is 0xff and 16 bytes for a lowercase hyphenated UUID, else its
//              length (u8) and UTF-8. Types a metric shows later are type keys (CF.index).
// v2: as v3 without the type bits, the uuid always as length and UTF-8 (its types are all
//     type keys). Read, not written.
// v1 (JSON, before dense ids): {"account_id","uuid","check_name","metric_name"}; given a
// dense id and rewritten as v3 when the index loads.

const V2 = 0x02;
const V3 = 0x03;
const BINARY_UUID = 0xff;
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface NameRecordFields {
  accountId: number;
  uuid: string;
  checkName: string;
  canonical: string;
}

export interface DecodedNameRecord extends NameRecordFields {
  /** null for a v1 record. */
  denseId: number | null;
  /** Kind bits (storage/metric-index KIND_BITS) the record carries; 0 before v3. */
  typeBits: number;
}

/**
 * `m.canonical` may be given as its UTF-8 bytes (the index's copy: a new series' record is then
 * written without decoding its name to text and encoding it back).
 */
export function encodeNameRecord(denseId: number, typeBits: number, m: Omit<NameRecordFields, 'canonical'> & { canonical: string | Uint8Array }): Buffer {
  // Written in place: a new series writes one record, and each field as its own Buffer first cost more than the record.
  const check = checkPart(m);
  const canonical = m.canonical;
  const out = Buffer.allocUnsafe(CHECK_PART_AT + check.length + (typeof canonical === 'string' ? Buffer.byteLength(canonical) : canonical.length));
  out[0] = V3;
  out.writeUInt32BE(denseId, 1);
  out[5] = typeBits;
  out.set(check, CHECK_PART_AT);
  if (typeof canonical === 'string') out.write(canonical, CHECK_PART_AT + check.length, 'utf8');
  else out.set(canonical, CHECK_PART_AT + check.length);
  return out;
}

/** Where a record's check part (account, uuid, check name) starts: after version, dense id and type bits. */
const CHECK_PART_AT = 6;

/** The last check part encoded: new series come check by check, so most records reuse it. */
let lastCheck: { accountId: number; uuid: string; checkName: string; bytes: Buffer } | null = null;

/** account (u32 BE) | uuid (0xff and 16 bytes, or length and UTF-8) | check name length (u16 BE) | check name. */
function checkPart(m: Omit<NameRecordFields, 'canonical'>): Buffer {
  const last = lastCheck;
  if (last !== null && last.accountId === m.accountId && last.uuid === m.uuid && last.checkName === m.checkName) return last.bytes;
  const binaryUuid = CANONICAL_UUID.test(m.uuid);
  const uuidLength = binaryUuid ? 16 : Buffer.byteLength(m.uuid);
  const checkLength = Buffer.byteLength(m.checkName);
  const bytes = Buffer.alloc(4 + 1 + uuidLength + 2 + checkLength);
  let at = bytes.writeUInt32BE(m.accountId, 0);
  at = bytes.writeUInt8(binaryUuid ? BINARY_UUID : uuidLength, at);
  at += binaryUuid ? bytes.write(m.uuid.replaceAll('-', ''), at, 'hex') : bytes.write(m.uuid, at, 'utf8');
  at = bytes.writeUInt16BE(checkLength, at);
  bytes.write(m.checkName, at, 'utf8');
  lastCheck = { accountId: m.accountId, uuid: m.uuid, checkName: m.checkName, bytes };
  return bytes;
}

export function decodeNameRecord(raw: Uint8Array): DecodedNameRecord {
  const b = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (b[0] !== V2 && b[0] !== V3) {
    const v1 = JSON.parse(b.toString('utf8')) as { account_id: number; uuid: string; check_name: string; metric_name: string };
    return { denseId: null, typeBits: 0, accountId: v1.account_id, uuid: v1.uuid, checkName: v1.check_name, canonical: v1.metric_name };
  }
  const v3 = b[0] === V3;
  const denseId = b.readUInt32BE(1);
  let at = 5;
  const typeBits = v3 ? b[at++]! : 0;
  const accountId = b.readUInt32BE(at);
  at += 4;
  const uuidLength = b[at++]!;
  let uuid: string;
  if (v3 && uuidLength === BINARY_UUID) {
    const hex = b.toString('hex', at, at + 16);
    uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    at += 16;
  } else {
    uuid = b.toString('utf8', at, at + uuidLength);
    at += uuidLength;
  }
  const checkEnd = at + 2 + b.readUInt16BE(at);
  const checkName = b.toString('utf8', at + 2, checkEnd);
  return { denseId, typeBits, accountId, uuid, checkName, canonical: b.toString('utf8', checkEnd) };
}
