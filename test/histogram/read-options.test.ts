// The histogram read's options as pure functions: C's %a for format=hex, min_granularity.
import test from 'ava';
import { hexFloat } from '../../model/hex-float.js';
import { coarsened, minGranularity } from '../../model/histogram-read-options.js';

test('hexFloat writes what glibc printf("%a") writes', (t) => {
  // Expected strings are glibc 2.x printf("%a") output for these doubles (checked with gcc).
  const cases: [number, string][] = [
    [1, '0x1p+0'],
    [3, '0x1.8p+1'],
    [0.1, '0x1.999999999999ap-4'],
    [-2.5, '-0x1.4p+1'],
    [0, '0x0p+0'],
    [-0, '-0x0p+0'],
    [5e-324, '0x0.0000000000001p-1022'],
    [Number.MAX_VALUE, '0x1.fffffffffffffp+1023'],
    [1e-128, '0x1.bba08cf8c979dp-426'],
    [NaN, 'nan'],
    [-Infinity, '-inf'],
  ];
  for (const [d, text] of cases) t.is(hexFloat(d), text, String(d));
  // Exact: the text gives back the same double.
  for (const d of [0.08, 1.1e-127, 9.9e127, -123.456, Math.PI]) {
    const m = /^(-?)0x([01])(?:\.([0-9a-f]+))?p([+-]\d+)$/.exec(hexFloat(d))!;
    const mantissa = Number.parseInt(`${m[2]}${m[3] ?? ''}`, 16) / 16 ** (m[3]?.length ?? 0);
    t.is((m[1] === '-' ? -1 : 1) * mantissa * 2 ** Number(m[4]), d);
  }
});

test('min_granularity: seconds, auto by retention, and the period it makes', (t) => {
  const levels = [{ period: 60, retention: 3600 }, { period: 300, retention: 86_400 }, { period: 1800, retention: 0 }];
  const now = 1_700_000_000_000;
  t.is(minGranularity(undefined, levels, 0, now), null);
  t.is(minGranularity('120', levels, 0, now), 120);
  t.is(minGranularity('auto', levels, now / 1000 - 60, now), 60);
  t.is(minGranularity('auto', levels, now / 1000 - 7200, now), 300);
  t.is(minGranularity('auto', levels, now / 1000 - 2 * 86_400, now), 1800);
  t.is(minGranularity('auto', [{ period: 60, retention: 10 }], 0, now), 60, 'nothing holds it: the coarsest level');
  for (const bad of ['0', '-1', 'x', '1e3', '9999999999']) t.is(typeof minGranularity(bad, levels, 0, now), 'string', bad);
  t.is(coarsened(60, null), 60);
  t.is(coarsened(60, 300), 300);
  t.is(coarsened(600, 300), 600);
  t.is(coarsened(400, 300), 600);
});
