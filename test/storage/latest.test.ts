// storage/latest.ts: latest-tracking flags set by a find with latest=2, forgotten with the metric.
import test from 'ava';
import { LatestFlags } from '../../storage/latest.js';
import { metricId, withStore } from './store.js';

test('latest flags: tracked once asked, forgotten with the metric', async (t) => {
  await withStore(async ({ store }) => {
    const flags = new LatestFlags(store);
    t.false(await flags.tracked(metricId(1)));
    await flags.track(metricId(1));
    t.true(await flags.tracked(metricId(1)));
    t.false(await flags.tracked(metricId(2)));
    const batch = store.batch();
    flags.stageForget(batch, metricId(1));
    await batch.write();
    t.false(await flags.tracked(metricId(1)));
  });
});
