// Per-partition markers in the `state` family (`<kind>/<partition>/<metric id hex>/<start>`):
// work a partition still owes (periods to merge, windows to roll up), kept on disk so a
// restart resumes it.
import { CF } from './keys.js';
import type { Store } from './rocks.js';

export interface Marker {
  idHex: string;
  start: number;
  value: Buffer;
}

/** Every marker under `prefix` (which ends in '/'). */
export async function loadMarkers(store: Store, prefix: string): Promise<Marker[]> {
  const out: Marker[] = [];
  // '0' is the byte after '/', so this range holds exactly the keys starting with `prefix`.
  const scan = store.scan(CF.state, { gte: Buffer.from(prefix), lt: Buffer.from(prefix.slice(0, -1) + '0') });
  for await (const { key, value } of scan) {
    const [idHex, start] = key.toString('utf8').slice(prefix.length).split('/') as [string, string];
    out.push({ idHex, start: Number(start), value });
  }
  return out;
}
