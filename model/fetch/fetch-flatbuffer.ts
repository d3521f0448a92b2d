// The FlatBuffer form of the fetch document (Content-Type: x-irondb-fetch-flatbuffer,
// schema model/fetch/fbs/fetch.fbs), read with the bounds-checked reader into the same
// `FetchDocument` the JSON form gives, converting its milliseconds to seconds.
import { uuidText } from '../metric-list/decode.js';
import { MetricListFormatError, SafeReader, type Table } from '../metric-list/reader.js';
import { FetchRequestError } from './errors.js';
import type { FetchDocument } from './request.js';

const KIND_NAMES: Record<number, string> = { 1: 'numeric', 2: 'histogram', 3: 'histogram', 4: 'text' };

export function decodeFetchFlatBuffer(bytes: Uint8Array): FetchDocument {
  try {
    return read(new SafeReader(bytes));
  } catch (e) {
    if (e instanceof MetricListFormatError) throw new FetchRequestError('body', `malformed fetch FlatBuffer: ${e.message}`);
    throw e;
  }
}

function read(r: SafeReader): FetchDocument {
  if (r.bytes.length < 8) r.fail(`a Fetch table needs at least 8 bytes, got ${r.bytes.length}`, 0);
  const root = r.table(r.deref(0));
  const startAt = r.field(root, 0, 8);
  const periodAt = r.field(root, 1, 4);
  const countAt = r.field(root, 2, 4);
  return {
    start: startAt === 0 ? 0 : Number(r.u64(startAt)) / 1000,
    period: periodAt === 0 ? undefined : r.u32(periodAt) / 1000,
    count: countAt === 0 ? undefined : r.u32(countAt),
    streams: tables(r, root, 3).map((s) => stream(r, s)),
    reduce: tables(r, root, 4).map((t) => ({ label: r.string(t, 0) ?? '', method: r.string(t, 1) ?? undefined, method_params: strings(r, t, 2) })),
  };
}

function stream(r: SafeReader, s: Table): Record<string, unknown> {
  const uuidBytes = r.vector(s, 0, 1);
  const kindAt = r.field(s, 2, 1);
  const kind = kindAt === 0 ? 0 : r.i8(kindAt);
  return {
    uuid: uuidBytes === null ? undefined : (uuidText(r.bytesOf(uuidBytes)) ?? `<${uuidBytes.length} bytes>`),
    name: r.string(s, 1) ?? undefined,
    kind: KIND_NAMES[kind] ?? `kind ${kind}`,
    transform: r.string(s, 3) ?? undefined,
    transform_params: strings(r, s, 4),
    label: r.string(s, 5) ?? undefined,
  };
}

function tables(r: SafeReader, t: Table, slot: number): Table[] {
  const v = r.vector(t, slot, 4);
  return Array.from({ length: v?.length ?? 0 }, (_, i) => r.table(r.deref(v!.start + 4 * i)));
}

function strings(r: SafeReader, t: Table, slot: number): string[] {
  const v = r.vector(t, slot, 4);
  return Array.from({ length: v?.length ?? 0 }, (_, i) => r.stringAt(r.deref(v!.start + 4 * i)));
}
