// DF4 JSON as bytes (model/fetch/df4.ts): the very text JSON.stringify gives of the whole answer,
// numeric columns rendered ahead of time or not, with non-ASCII labels, tags and text cells.
import test from 'ava';
import type { Column, NumericColumn } from '../../model/fetch/column.js';
import { df4Json, numericCellsJson } from '../../model/fetch/df4.js';

const head = { startMs: 1_700_000_000_000, periodMs: 60_000, count: 4, errors: [], warnings: ['sé'] };

test('the bytes are JSON.stringify of the answer, cells rendered ahead of time or not', (t) => {
  const rendered: NumericColumn = { kind: 'numeric', label: 'température', tags: ['__name:température', 'host:h☃'], values: [1.5, null, NaN, 1e21] };
  rendered.json = numericCellsJson(Float64Array.of(1.5, NaN, -Infinity, 1e21));
  const plain: NumericColumn = { kind: 'numeric', label: 'b', tags: [], values: [-0, Infinity, 0.1 + 0.2, 42] };
  const text: Column = { kind: 'text', label: '日本', tags: ['k:v'], values: [[], [[5, 'naïve ✓']], [], []] };
  const columns = [rendered, plain, text];
  const bytes = df4Json(head, columns);
  const expected = JSON.stringify({
    version: 'DF4',
    head: { count: 4, start: 1_700_000_000, period: 60, warning: ['sé'] },
    meta: columns.map((c) => ({ kind: c.kind, label: c.label, tags: c.tags })),
    data: [
      [1.5, null, null, 1e21],
      [0, null, 0.30000000000000004, 42],
      [[], [[5, 'naïve ✓']], [], []],
    ],
  });
  t.is(bytes.toString('utf8'), expected);
  t.deepEqual(bytes, Buffer.from(expected, 'utf8'));
  t.is(df4Json(head, []).toString(), '{"version":"DF4","head":{"count":4,"start":1700000000,"period":60,"warning":["sé"]},"meta":[],"data":[]}');
});

test('cells rendered ahead of time read as JSON.stringify writes them, NaN and infinities as null, whatever was rendered before', (t) => {
  const cells = (values: number[]) => ({ cells: Float64Array.from(values), json: JSON.stringify(values.map((v) => (Number.isFinite(v) ? v : null))) });
  const columns = [
    cells([-0, 5e-324, 1.7976931348623157e308, 0.1 + 0.2, -1e-7, 123456789012345680000, NaN, Infinity, -Infinity, 42]),
    cells([3]), // shorter than the one before: nothing of it is left over
    cells([]),
    cells(Array.from({ length: 1440 }, (_, i) => (i % 7 === 0 ? NaN : Math.sin(i) * 1e3))),
    cells([NaN, 1]),
  ];
  for (const c of columns) t.is(numericCellsJson(c.cells), c.json);
});
