// Where a V8 heap snapshot's bytes are: self sizes summed by kind of node (a constructor's
// objects, strings, arrays, code…), largest first; with `--per <n>`, also in bytes per n
// (e.g. per series of a `bench:scale --heap-snapshots` run). Reads the whole snapshot as one
// JSON text, so snapshots up to a few hundred MB (a node of ≈ 100k series).
//
//   node dist/bench/heap-summary.js <file.heapsnapshot> [--top 25] [--per 100000]
import { readFileSync } from 'node:fs';
import { Command } from 'commander';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

interface Kind {
  count: number;
  bytes: number;
}

/** Self bytes per kind: an object by its constructor's name, everything else by its node type. */
export function summarise(s: Snapshot): Map<string, Kind> {
  const fields = s.snapshot.meta.node_fields;
  const types = s.snapshot.meta.node_types[0];
  const width = fields.length;
  const TYPE = fields.indexOf('type');
  const NAME = fields.indexOf('name');
  const SIZE = fields.indexOf('self_size');
  const kinds = new Map<string, Kind>();
  for (let at = 0; at < s.nodes.length; at += width) {
    const type = types[s.nodes[at + TYPE]!]!;
    const label = type === 'object' || type === 'closure' ? `${type} ${s.strings[s.nodes[at + NAME]!]}` : `(${type})`;
    let k = kinds.get(label);
    if (k === undefined) kinds.set(label, (k = { count: 0, bytes: 0 }));
    k.count++;
    k.bytes += s.nodes[at + SIZE]!;
  }
  return kinds;
}

function main(): void {
  const cmd = new Command('heap-summary')
    .argument('<snapshot>')
    .option('--top <n>', 'kinds to print', (v) => Number(v), 25)
    .option('--per <n>', 'also print bytes per this many (e.g. series)', (v) => Number(v))
    .parse();
  const o = cmd.opts<{ top: number; per?: number }>();
  const kinds = summarise(JSON.parse(readFileSync(cmd.args[0]!, 'utf8')) as Snapshot);
  const total = [...kinds.values()].reduce((sum, k) => sum + k.bytes, 0);
  const per = o.per === undefined ? '' : ` | B per ${o.per === 1 ? 'one' : 'one of ' + o.per}`;
  console.log(`| kind | count | MiB${per} |\n|---|---|---|${o.per === undefined ? '' : '---|'}`);
  const row = (label: string, k: Kind) => console.log(`| ${label} | ${k.count} | ${(k.bytes / 2 ** 20).toFixed(1)}${o.per === undefined ? '' : ` | ${(k.bytes / o.per).toFixed(1)}`} |`);
  for (const [label, k] of [...kinds].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, o.top)) row(label, k);
  row('all', { count: [...kinds.values()].reduce((sum, k) => sum + k.count, 0), bytes: total });
}

main();
