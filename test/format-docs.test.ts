// docs/format/storage.md must describe every column family and key the code writes: a family,
// a `state` key, a `<name>/` key prefix or an index tag byte that exists in storage/keys.ts but
// not on the page fails this test (the habit of fastify's errors test, for on-disk names).
import test from 'ava';
import { readFileSync } from 'node:fs';
import { ALL_COLUMN_FAMILIES, STATE_KEY } from '../storage/keys.js';

const doc = readFileSync('docs/format/storage.md', 'utf8');
const source = readFileSync('storage/keys.ts', 'utf8');
/** The rows of the page's table: [family, store, key, value]. */
const rows = doc
  .split('\n')
  .filter((l) => /^\| `\w+` \| (node|shard) \|/.test(l))
  .map((l) => l.split(' | ').map((c) => c.replace(/^\| /, '').trim()));

test('every column family has a row', (t) => {
  const documented = new Set(rows.map((r) => r[0]!.replace(/`/g, '')));
  for (const cf of ALL_COLUMN_FAMILIES) t.true(documented.has(cf), `column family ${cf} is not in docs/format/storage.md`);
});

test('every named state key has a row', (t) => {
  const keys = rows.filter((r) => r[0] === '`state`').map((r) => r[2]!);
  for (const [name, key] of Object.entries(STATE_KEY)) t.true(keys.includes(`\`${key.toString()}\``), `state key ${name} (${key.toString()}) is not documented`);
});

test('every key prefix of the form `<name>/` has a row', (t) => {
  const prefixes = [...source.matchAll(/`([a-z_]+)\/\$\{/g)].map((m) => m[1]!);
  t.true(prefixes.length >= 4, 'found the prefixes in storage/keys.ts');
  for (const p of prefixes) t.true(rows.some((r) => r[2]!.startsWith(`\`${p}/`)), `key prefix ${p}/ is not documented`);
});

test('every index tag byte has a row', (t) => {
  const tags = [...source.matchAll(/= 0x[0-9a-f]{2}; \/\/ '(.)'/g)].map((m) => m[1]!);
  t.true(tags.length >= 6, 'found the tag bytes in storage/keys.ts');
  for (const tag of tags) t.true(rows.some((r) => r[0] === '`index`' && r[2]!.startsWith(`\`${tag}\` ·`)), `index key tag '${tag}' is not documented`);
});
