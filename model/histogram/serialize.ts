// circllhist binary form (../shared/spec/circllhist.md §5–§6): u16 big-endian record count,
// then per bin with a count: val (i8), exp (i8), t (u8), count in t+1 bytes little-endian.
// We write the correct minimal t (the reference loses bits for counts in [2^32, 2^36) and
// [2^48, 2^52); every reader decodes by t, so ours stays compatible and lossless).
import { binIsValid, type Bin } from './bin.js';
import { Histogram } from './histogram.js';

export class HistogramFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HistogramFormatError';
  }
}

export function serializeHistogram(h: Histogram): Uint8Array {
  const records = h.entries().filter((e) => e.count > 0n);
  const out = new Uint8Array(2 + records.length * 11);
  out[0] = records.length >>> 8;
  out[1] = records.length & 0xff;
  let at = 2;
  for (const { bin, count } of records) {
    out[at++] = bin.val & 0xff;
    out[at++] = bin.exp & 0xff;
    const width = countWidth(count);
    out[at++] = width - 1;
    let c = count;
    for (let i = 0; i < width; i++, c >>= 8n) out[at++] = Number(c & 0xffn);
  }
  return out.slice(0, at);
}

function countWidth(count: bigint): number {
  let width = 1;
  while (width < 8 && count >> BigInt(8 * width) !== 0n) width++;
  return width;
}

/**
 * Reads what the reference reader accepts (§5.1): a short record list, zero counts and
 * invalid bins skipped, non-minimal widths. Records are merged in bin order (the reference
 * keeps file order). Trailing bytes after the records are ignored here, as `hist_deserialize`
 * does; `histogramFromBase64` rejects them.
 */
export function deserializeHistogram(bytes: Uint8Array): Histogram {
  return readRecords(bytes).hist;
}

function readRecords(bytes: Uint8Array): { hist: Histogram; consumed: number } {
  if (bytes.length < 2) throw new HistogramFormatError(`a serialized histogram needs at least 2 bytes, got ${bytes.length}`);
  const declared = (bytes[0]! << 8) | bytes[1]!;
  const h = Histogram.empty();
  let at = 2;
  for (let r = 0; r < declared && at < bytes.length; r++) {
    if (at + 3 > bytes.length) throw new HistogramFormatError(`record ${r} at byte ${at} is cut short`);
    const bin: Bin = { val: (bytes[at]! << 24) >> 24, exp: (bytes[at + 1]! << 24) >> 24 };
    const t = bytes[at + 2]!;
    if (t > 7) throw new HistogramFormatError(`record ${r} at byte ${at} has count width byte ${t} (at most 7)`);
    if (at + 3 + t + 1 > bytes.length) throw new HistogramFormatError(`record ${r} at byte ${at} needs ${t + 1} count bytes`);
    let count = 0n;
    for (let i = t; i >= 0; i--) count = (count << 8n) | BigInt(bytes[at + 3 + i]!);
    at += 4 + t;
    if (count > 0n && binIsValid(bin)) h.insertBin(bin, count);
  }
  return { hist: h, consumed: at };
}

export function histogramToBase64(h: Histogram): string {
  return Buffer.from(serializeHistogram(h)).toString('base64');
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Standard base64 with padding (ASCII whitespace skipped); trailing bytes after the records are an error. */
export function histogramFromBase64(text: string): Histogram {
  const compact = text.replace(/[ \t\r\n\f\v]/g, '');
  if (!BASE64.test(compact) || compact.length % 4 !== 0) throw new HistogramFormatError('not standard padded base64');
  const bytes = Buffer.from(compact, 'base64');
  const { hist, consumed } = readRecords(bytes);
  if (consumed !== bytes.length) throw new HistogramFormatError(`${bytes.length - consumed} bytes follow the histogram's records`);
  return hist;
}
