// actors/ingest/series-screens.ts: a parse worker's series-limit state by sid: nothing known
// until the node says so, each series stamped once a body, and sids far apart kept apart.
import test from 'ava';
import { SeriesScreens } from '../actors/ingest/series-screens.js';

test('a series is neither admitted nor refused until the node says so; then in that generation only', (t) => {
  const s = new SeriesScreens();
  t.is(s.admitted(5), -1);
  t.is(s.refused(5), -1);
  s.admit(5, 3);
  s.refuse(70_000, 4, 'account 1 has reached its limit of 10 series');
  t.is(s.admitted(5), 3);
  t.is(s.refused(5), -1);
  t.is(s.refused(70_000), 4);
  t.is(s.reason(70_000), 'account 1 has reached its limit of 10 series');
  t.is(s.admitted(69_999), -1, 'growing for a far sid leaves the sids between unknown');
});

test('a series is stamped once a body, body 0 included', (t) => {
  const s = new SeriesScreens();
  t.true(s.stamp(9, 0));
  t.false(s.stamp(9, 0));
  t.true(s.stamp(9, 1));
  t.true(s.stamp(10, 1));
  t.false(s.stamp(10, 1));
});
