// `vector:*` (reference "Package vector"): a vector is a set of streams keyed by a label
// format, so that binary operators pair the streams of two vectors by key instead of by
// position (op:* drop keys missing from either side). Functions that keep streams keep their
// keys; aggregations across streams give plain streams.
import { CaqlUserError } from '../errors.js';
import { sig } from '../signature.js';
import type { Stream } from '../stream.js';
import { formatLabel } from './label-format.js';
import { define, type CaqlFunction } from './types.js';
import { lookupTable } from '../../model/lookup-table.js';

/**
 * `vector:pack(format, sloppy=0, meta=1)`: each stream keyed by its formatted label. Two
 * streams with one key are an error unless sloppy=1 (then the first is kept); meta=0 drops
 * each stream's tags and labels it by its key.
 */
const pack = define(sig('format:string', 'sloppy:number=0, meta:number=1'), async (inv) => {
  const streams = await inv.sources();
  const seen = new Map<string, Stream>();
  streams.forEach((s, i) => {
    const key = formatLabel(inv.str('format'), s, i, streams);
    if (!seen.has(key)) seen.set(key, inv.num('meta') === 0 ? { ...s, key, label: key, tags: [] } : { ...s, key });
    else if (inv.num('sloppy') === 0) throw new CaqlUserError(`${inv.name}: two streams have the key '${key}' (pass sloppy=1 to keep the first)`);
  });
  return [...seen.values()];
});

const unpack = define(sig(), async (inv) =>
  (await inv.sources()).map((s) => {
    const { key: _key, ...plain } = s;
    return plain as Stream;
  }),
);

/** `vector:drop(key…)`: removes the streams with those keys. */
const drop = define(sig('...index:string'), async (inv) => {
  const keys = new Set(inv.strs('index'));
  return (await inv.sources()).filter((s) => s.key === undefined || !keys.has(s.key));
});

export const VECTORS: Record<string, CaqlFunction> = lookupTable({ vector: pack, 'vector:pack': pack, 'vector:unpack': unpack, 'vector:drop': drop });
