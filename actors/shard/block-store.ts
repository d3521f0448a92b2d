// How each data kind is laid out in storage: which column family, which block codec.
import { blockHeader, decodeNumericBlock, encodeNumericBlock } from '../../model/codec/numeric-block.js';
import { decodeTextBlock, encodeTextBlock } from '../../model/codec/text-block.js';
import type { DataKind } from '../../model/ingest-record.js';
import type { Series } from '../../model/series.js';
import type { NumericValue } from '../../model/types.js';
import { CF, type ColumnFamilyName } from '../../storage/keys.js';
import type { BufferValue } from './window-buffer.js';

export interface KindLayout {
  cf: ColumnFamilyName;
  encode(s: Series<BufferValue>): Uint8Array;
  decode(bytes: Uint8Array): Series<BufferValue>;
}

const numericLayout: KindLayout = {
  cf: CF.numeric,
  encode: (s) => encodeNumericBlock(s as Series<NumericValue>),
  decode: (bytes) => decodeNumericBlock(bytes) as Series<BufferValue>,
};

const textLayout = (cf: ColumnFamilyName): KindLayout => ({
  cf,
  encode: (s) => encodeTextBlock(s as Series<string | null>),
  decode: (bytes) => decodeTextBlock(bytes) as Series<BufferValue>,
});

export const LAYOUT: Record<DataKind, KindLayout> = {
  numeric: numericLayout,
  text: textLayout(CF.text),
  // Histograms are kept as submitted (base64 text) until the histogram store decodes them.
  histogram: textLayout(CF.histogramRaw),
};

export { blockHeader };
