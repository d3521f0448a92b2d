// Prometheus remote storage bodies: snappy block compression around protobuf messages
// (remote.proto beside this file). Pure: bytes in, plain objects out, and back.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { compressSync, uncompressSync } from 'snappy';
import { setLabel, type LabelMatcher, type Labels, type MatcherType } from './types.js';

export interface RemoteSample {
  value: number;
  /** Epoch ms. */
  timestamp: number;
}

export interface RemoteSeries {
  labels: Labels;
  samples: RemoteSample[];
  /** Native histogram samples in the series (ferrite does not store them). */
  histograms: number;
}

export interface RemoteQuery {
  startMs: number;
  endMs: number;
  matchers: LabelMatcher[];
}

/** The body is not snappy, not the message, or decodes to something the protocol forbids. */
export class RemoteFormatError extends Error {
  override name = 'RemoteFormatError';
}

// The .proto stays the source of truth; the build leaves it in model/, beside this module's source.
const PROTO = fileURLToPath(new URL('../../../model/prometheus/remote.proto', import.meta.url));
// keepCase: field names as the .proto spells them (snake_case), not camelCased.
const root = protobuf.parse(readFileSync(PROTO, 'utf8'), { keepCase: true }).root;
const WriteRequest = root.lookupType('prometheus.WriteRequest');
const ReadRequest = root.lookupType('prometheus.ReadRequest');
const ReadResponse = root.lookupType('prometheus.ReadResponse');
const MATCHER_TYPES: MatcherType[] = ['=', '!=', '=~', '!~'];
const TO_OBJECT = { longs: Number, enums: Number, defaults: true, arrays: true } as const;

/**
 * Snappy block format (not framed), as remote write and read use it, decoded by the `snappy`
 * package (Rust). snappyjs, used before, looped for ~20 s on a 4-byte literal length with the
 * top bit set (a 200-byte body wedged the node; issue 17's fuzzers).
 */
export function unsnappy(body: Uint8Array, maxBytes: number): Uint8Array {
  if (body.length === 0) throw new RemoteFormatError('the body is empty');
  const declared = uncompressedLength(body);
  // Checked first: the decoder allocates what the header says before it reads a byte.
  const bound = Math.min(maxBytes, MAX_EXPANSION * body.length);
  if (declared === null || declared > bound) throw new RemoteFormatError(`not snappy-compressed: the header declares ${declared ?? 'an unreadable number of'} bytes, at most ${bound} possible`);
  try {
    return uncompressSync(body, { asBuffer: true }) as Buffer;
  } catch (error) {
    throw new RemoteFormatError(`not snappy-compressed: ${(error as Error).message}`);
  }
}

/** No snappy element expands more than 64 / 3 times (a 3-byte copy of 64 bytes): a header claiming more lies. */
const MAX_EXPANSION = 22;

/** The block's leading varint (at most 32 bits): the uncompressed length, or null. */
function uncompressedLength(body: Uint8Array): number | null {
  let length = 0;
  for (let i = 0; i < Math.min(5, body.length); i++) {
    length += (body[i]! & 0x7f) * 2 ** (7 * i);
    if (body[i]! < 0x80) return length <= 0xffff_ffff ? length : null;
  }
  return null;
}

function decode(type: protobuf.Type, bytes: Uint8Array, what: string): Record<string, unknown> {
  try {
    return type.toObject(type.decode(bytes), TO_OBJECT);
  } catch (error) {
    throw new RemoteFormatError(`not a ${what} message: ${(error as Error).message}`);
  }
}

interface WireLabel {
  name: string;
  value: string;
}

function labelsOf(wire: WireLabel[]): Labels {
  const labels: Labels = {};
  for (const l of wire) {
    if (Object.hasOwn(labels, l.name)) throw new RemoteFormatError(`label ${JSON.stringify(l.name)} appears twice in one series`);
    setLabel(labels, l.name, l.value);
  }
  return labels;
}

/** A snappy-compressed remote-write 1.0 `WriteRequest`. */
export function decodeWriteRequest(body: Uint8Array, maxBytes: number): RemoteSeries[] {
  const message = decode(WriteRequest, unsnappy(body, maxBytes), 'WriteRequest');
  const series = message.timeseries as { labels: WireLabel[]; samples: RemoteSample[]; histograms: unknown[] }[];
  return series.map((s) => ({ labels: labelsOf(s.labels), samples: s.samples, histograms: s.histograms.length }));
}

/** A snappy-compressed `ReadRequest`; only SAMPLES responses are offered. */
export function decodeReadRequest(body: Uint8Array, maxBytes: number): RemoteQuery[] {
  const message = decode(ReadRequest, unsnappy(body, maxBytes), 'ReadRequest');
  const accepted = message.accepted_response_types as number[];
  if (accepted.length > 0 && !accepted.includes(0)) throw new RemoteFormatError('only the SAMPLES response type is served; the request does not accept it');
  const queries = message.queries as { start_timestamp_ms: number; end_timestamp_ms: number; matchers: { type: number; name: string; value: string }[] }[];
  return queries.map((q) => ({
    startMs: q.start_timestamp_ms,
    endMs: q.end_timestamp_ms,
    matchers: q.matchers.map((m) => {
      const type = MATCHER_TYPES[m.type];
      if (type === undefined) throw new RemoteFormatError(`unknown matcher type ${m.type}`);
      return { type, name: m.name, value: m.value };
    }),
  }));
}

/** A snappy-compressed `ReadResponse` with one result per query. */
export function encodeReadResponse(results: { labels: Labels; samples: RemoteSample[] }[][]): Uint8Array {
  const message = {
    results: results.map((series) => ({
      timeseries: series.map((s) => ({ labels: Object.entries(s.labels).map(([name, value]) => ({ name, value })), samples: s.samples })),
    })),
  };
  return compressSync(ReadResponse.encode(ReadResponse.fromObject(message)).finish());
}

/** Test and client helpers: the same messages in the other direction. */
export function encodeWriteRequest(series: { labels: Labels; samples: RemoteSample[] }[]): Uint8Array {
  const message = { timeseries: series.map((s) => ({ labels: Object.entries(s.labels).map(([name, value]) => ({ name, value })), samples: s.samples })) };
  return compressSync(WriteRequest.encode(WriteRequest.fromObject(message)).finish());
}

export function encodeReadRequest(queries: RemoteQuery[]): Uint8Array {
  const message = {
    queries: queries.map((q) => ({
      start_timestamp_ms: q.startMs,
      end_timestamp_ms: q.endMs,
      matchers: q.matchers.map((m) => ({ type: MATCHER_TYPES.indexOf(m.type), name: m.name, value: m.value })),
    })),
  };
  return compressSync(ReadRequest.encode(ReadRequest.fromObject(message)).finish());
}

export function decodeReadResponse(body: Uint8Array): { labels: Labels; samples: RemoteSample[] }[][] {
  const message = decode(ReadResponse, unsnappy(body, 2 ** 31 - 1), 'ReadResponse');
  return (message.results as { timeseries: { labels: WireLabel[]; samples: RemoteSample[] }[] }[]).map((r) =>
    r.timeseries.map((s) => ({ labels: labelsOf(s.labels), samples: s.samples })),
  );
}
