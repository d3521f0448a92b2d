// Text blocks: header + timestamps (block-header.ts), then each non-null value as a
// varint byte length and its UTF-8 bytes.
import { BlockFormat, readHeader, writeHeader } from './block-header.js';
import { ByteReader, ByteWriter } from './bytes.js';

export interface TextSamples {
  ts: number[];
  values: (string | null)[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function encodeTextBlock(samples: TextSamples): Uint8Array {
  const { ts, values } = samples;
  const present = values.includes(null) ? values.map((v) => v !== null) : null;
  const w = new ByteWriter(16 + ts.length * 8);
  writeHeader(w, BlockFormat.Text, ts, present);
  for (const v of values) {
    if (v === null) continue;
    const bytes = encoder.encode(v);
    w.varint(bytes.length);
    w.bytes(bytes);
  }
  return w.finish().slice();
}

export function decodeTextBlock(bytes: Uint8Array): TextSamples {
  const r = new ByteReader(bytes);
  const head = readHeader(r);
  if (head.version !== BlockFormat.Text) r.fail(`format ${head.version} is not a text block`);
  const values = new Array<string | null>(head.count);
  for (let i = 0; i < head.count; i++) {
    if (head.present !== null && !head.present[i]) {
      values[i] = null;
      continue;
    }
    const raw = r.bytes(r.varint());
    try {
      values[i] = decoder.decode(raw);
    } catch {
      r.fail('a text value is not valid UTF-8');
    }
  }
  return { ts: head.ts, values };
}
