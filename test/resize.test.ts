// `ferrite resize` on the real rig (nats-server, three `ferrite serve` processes at W=2): bad
// input is refused with a clear message and exit code 2; a dry run prints the change and
// changes nothing; with --yes --wait it grows the cluster to four (the new node started first
// with the topology the dry run wrote) and then shrinks it back to three, each to the end.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { buildRing, movedShare, ownersOf, parseTopology } from '../model/topology/index.js';
import { freePort } from '../transport/ports.js';
import { startCluster } from './helpers/cluster.js';
import { BIN, getJson, killSpawnedNodes, mLine, put, spawnNode, tempDir, UUID } from './helpers/node.js';
import { owners, raw } from './helpers/rebalance.js';

test.after.always(killSpawnedNodes);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function resize(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, 'resize', ...args], { timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

test.serial('ferrite resize: refusals, a dry run, then 3 → 4 and 4 → 3 with --yes --wait', async (t) => {
  const c = await startCluster(3, 2);
  const dir = tempDir('ferrite-resize-');
  try {
    const boot = c.members[0]!.url;
    const [a, b] = c.members as [(typeof c.members)[0], (typeof c.members)[0]];
    const refused = async (args: string[], message: RegExp) => {
      const r = await resize('-b', boot, ...args);
      t.is(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      t.regex(r.stderr, message, args.join(' '));
    };
    await refused(['-r', a.id, '-r', b.id], /removes 2 node\(s\).*at most write_copies − 1 = 1/);
    await refused(['-r', '0c7a9e11-0000-4000-8000-00000000beef'], /node 0c7a9e11-0000-4000-8000-00000000beef is not in the current topology/);
    await refused(['-a', `127.0.0.1:${b.port}`], new RegExp(`address 127.0.0.1:${b.port} is already node ${b.id}'s`));
    await refused(['-a', 'nowhere'], /'nowhere' is not address:port/);
    await refused([], /nothing to change/);
    const gone = await resize('-b', `http://127.0.0.1:${await freePort()}`, '-r', a.id);
    t.is(gone.code, 2);
    t.regex(gone.stderr, /did not answer GET \/rebalance\/state/);
    const noBootstrap = await resize('-r', a.id);
    t.not(noBootstrap.code, 0);
    t.regex(noBootstrap.stderr, /--bootstrap/);

    const names = Array.from({ length: 30 }, (_, i) => `c.resize${i}`);
    t.is((await put(boot, names.map((n, i) => mLine('600.000', n, 'n', String(i))).join('\n'))).status, 200);
    await c.settled();

    // A dry run with the new node's id: prints the change and writes the topology to start it with.
    const id = randomUUID();
    const port = await freePort();
    const file = path.join(dir, 'grown.json');
    const dry = await resize('-b', boot, '-a', `127.0.0.1:${port},${id}`, '-o', file);
    t.is(dry.code, 0, dry.stderr);
    const grown = parseTopology(readFileSync(file, 'utf8'));
    t.deepEqual(grown.nodes.map((n) => n.id), [...c.members.map((m) => m.id), id]);
    t.regex(dry.stdout, new RegExp(`new topology ${grown.hash}: 4 nodes \\(1 added, 0 removed\\)`));
    const moved = movedShare(buildRing(parseTopology(JSON.stringify({ write_copies: 2, nodes: grown.nodes.slice(0, 3) }))), buildRing(grown));
    t.regex(dry.stdout, new RegExp(`moves: ${(100 * moved.metrics).toFixed(1)}% of the metrics get a new owner`));
    t.regex(dry.stdout, /dry run: nothing changed/);
    t.regex(dry.stdout, new RegExp(`start ${id} with: ferrite serve --node-id ${id} --topology ${file} --join --port ${port}`));
    t.is((await getJson(`${boot}/topology/${grown.hash}`)).status, 404, 'a dry run loads nothing');
    const made = await resize('-b', boot, '-a', `127.0.0.1:${port}`);
    t.regex(made.stdout, /\+ [0-9a-f-]{36} 127\.0\.0\.1:\d+ weight 32 {2}\(new id, made here\)/, 'an id left out is made and printed');

    const joined = await spawnNode(path.join(dir, 'data'), ['--port', String(port), '--node-id', id, '--topology', file, '--join', '--nats', c.nats.url]);
    const grow = await resize('-b', boot, '-a', `127.0.0.1:${port},${id}`, '--yes', '--wait');
    t.is(grow.code, 0, grow.stderr);
    t.is(grow.stdout.match(/^activated on /gm)?.length, 3, 'activated on every old node');
    t.regex(grow.stdout, new RegExp(`rebalance complete: every node runs ${grown.hash}; \\d+ metrics and [\\d.]+ MB sent`));
    const all = [...c.members.map((m) => m.url), joined.url];
    for (const url of all) t.like((await getJson(`${url}/rebalance/state`)).json, { current: grown.hash, next: '-', state: 'TOPO_REBALANCE_IDLE' });
    const ring = buildRing(grown);
    for (const name of names) {
      t.deepEqual(await owners(joined.url, name), ownersOf(ring, `${UUID}-${name}`).map((n) => n.id));
      if (ownersOf(ring, `${UUID}-${name}`).some((n) => n.id === id)) t.deepEqual(await raw(joined.url, name), [[600000, names.indexOf(name)]], `${name} on the new node`);
    }

    // Shrinking, bootstrapped from the new node (IRONdb's host:port form): the second old node leaves.
    const shrunk = await resize('-b', `127.0.0.1:${port}`, '-r', b.id, '--yes', '--wait');
    t.is(shrunk.code, 0, shrunk.stderr);
    t.regex(shrunk.stdout, /: 3 nodes \(0 added, 1 removed\)/);
    t.regex(shrunk.stdout, new RegExp(`stop the removed nodes now: ${b.id}`));
    const last = parseTopology(JSON.stringify({ write_copies: 2, nodes: grown.nodes.filter((n) => n.id !== b.id) }));
    t.like((await getJson(`${b.url}/rebalance/state`)).json, { current: last.hash, state: 'TOPO_REBALANCE_IDLE' });
    for (const name of names) t.is(((await raw(b.url, name)) as { code?: string }).code, 'FER_ERR_METRIC_NOT_FOUND', `${name}: the removed node keeps none`);
    await c.kill(1);
    for (const url of [a.url, c.members[2]!.url, joined.url]) {
      for (const name of names) t.deepEqual((await getJson(`${url}/raw/${UUID}/${name}?start_ts=0.000&end_ts=100000.000`)).json, [[600000, names.indexOf(name)]], `${name} through ${url} after the shrink`);
    }
    joined.child.kill('SIGTERM');
    await joined.exited;
  } finally {
    await c.stop();
  }
});
