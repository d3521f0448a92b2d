// storage/retention.ts: the retention sweep leaves raw windows past the raw retention alone
// (the partitions age them into rollups: test/storage/rollups.test.ts, test/ageing.test.ts);
// metricIdsIn visits each metric once.
import test from 'ava';
import { BlockStore } from '../../storage/blocks.js';
import { CF } from '../../storage/keys.js';
import { metricIdsIn, sweepRetention } from '../../storage/retention.js';
import { resolveConfig } from '../../model/config.js';
import { metricId, withStore } from './store.js';

const SPAN = 600_000;

test('raw windows past the raw retention are left to ageing', async (t) => {
  await withStore(async ({ store }) => {
    const blocks = await BlockStore.open(store, 0);
    const batch = blocks.batch();
    const seqs = blocks.nextSeqs(6);
    let k = 0;
    for (const n of [1, 2]) for (const w of [0, SPAN, 2 * SPAN]) blocks.stageBlock(batch, { id: metricId(n) }, 'numeric', w, seqs[k++]!, { ts: [w + 1], values: [n] });
    await batch.write();
    const ids: string[] = [];
    for await (const id of metricIdsIn(store, CF.numeric)) ids.push(id.toString('hex'));
    t.deepEqual(ids, [metricId(1).toString('hex'), metricId(2).toString('hex')]);
    const config = resolveConfig({ dataDir: '/unused', rawRetention: 3600, blockSpanMs: SPAN });
    await sweepRetention(store, config, SPAN + 3_600_000 + 1_000);
    for (const n of [1, 2]) {
      const left = await blocks.read({ id: metricId(n) }, 'numeric', 0, 3 * SPAN, SPAN);
      t.deepEqual(left.map((s) => s.ts[0]), [1, SPAN + 1, 2 * SPAN + 1], `metric ${n}`);
    }
  });
});
