// storage/metric-index/activity-blocks.ts (and the framing it shares with name blocks,
// packed-block.ts): a range's entries round-trip, ids relative to the range's start; metrics
// scraped together pack to about a byte each; a block of another version or damaged bytes is refused.
import test from 'ava';
import fc from 'fast-check';
import { ACTIVITY_BLOCK_IDS, activityRangeOf, decodeActivityBlock, encodeActivityBlock, type ActivityEntry } from '../../storage/metric-index/activity-blocks.js';

const arbRange = fc.integer({ min: 0, max: 4_000_000 });
const arbWindows = fc.array(fc.tuple(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 2 ** 32 - 1 })), { maxLength: 4 });

test('entries round-trip, in id order, with any windows', (t) => {
  fc.assert(
    fc.property(arbRange, fc.uniqueArray(fc.integer({ min: 0, max: ACTIVITY_BLOCK_IDS - 1 }), { maxLength: 64 }), arbWindows, (range, offsets, windows) => {
      const entries: ActivityEntry[] = offsets.sort((a, b) => a - b).map((o) => ({ id: range * ACTIVITY_BLOCK_IDS + o, windows }));
      const back = decodeActivityBlock(range, encodeActivityBlock(range, entries));
      t.deepEqual(back, entries.map((e) => ({ id: e.id, windows: e.windows.map(([a, b]) => [a, b]) })));
      for (const e of back) t.is(activityRangeOf(e.id), range);
    }),
  );
});

test('1024 metrics scraped together pack into about a byte each (an `a` key cost ≈ 40)', (t) => {
  const range = 977;
  const entries = Array.from({ length: ACTIVITY_BLOCK_IDS }, (_, o) => ({ id: range * ACTIVITY_BLOCK_IDS + o, windows: [[1_795_800_000, 1_795_860_300]] as const }));
  const block = encodeActivityBlock(range, entries);
  t.true(block.length < 1.5 * ACTIVITY_BLOCK_IDS, `${block.length} bytes`);
  t.is(decodeActivityBlock(range, block).length, ACTIVITY_BLOCK_IDS);
});

test('a block of another version, or damaged, is refused naming it', (t) => {
  const block = encodeActivityBlock(3, [{ id: 3 * ACTIVITY_BLOCK_IDS + 5, windows: [[300, 600]] }]);
  const other = Buffer.from(block);
  other[0] = 0x7f;
  t.throws(() => decodeActivityBlock(3, other), { message: /activity block 3 of version 127/ });
  t.throws(() => decodeActivityBlock(3, block.subarray(0, block.length - 3)));
});
