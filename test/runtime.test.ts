// The runtime ferrite is built and tested on: Node 24 LTS, even on a machine whose system
// Node is older (README: the npm-packaged Node that `npm ci` installs).
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { getJson, killSpawnedNodes, spawnNode, stopChild, tempDir } from './helpers/node.js';

const major = (version: string): number => Number(/^v?(\d+)\./.exec(version)![1]);

test.after.always(() => killSpawnedNodes());

test('npm scripts run the tests on Node 24 or newer', (t) => {
  t.true(major(process.version) >= 24, `tests run on ${process.version}`);
});

/** A Node on this machine older than ferrite supports, outside node_modules: the system's. */
function systemNodeOlderThan22(): string | null {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    const r = spawnSync(candidate, ['-v'], { encoding: 'utf8' });
    if (r.status === 0 && major(r.stdout.trim()) < 22) return candidate;
  }
  return null;
}

test('bin/ferrite.js started by an old system Node serves on the packaged Node 24', async (t) => {
  const old = systemNodeOlderThan22();
  if (old === null) {
    t.log('no system Node older than 22 on this machine: nothing to re-run (the re-run path is untested here)');
    t.pass();
    return;
  }
  const dataDir = tempDir();
  try {
    const node = await spawnNode(dataDir, [], old);
    const { json } = await getJson(`${node.url}/state`);
    t.is(json.node_version, process.version, `started by ${old}`);
    node.child.kill('SIGTERM');
    t.is(await node.exited, 0, 'SIGTERM reaches the node through the re-running parent and it stops cleanly');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/**
 * The glibc tunables a running process was started with and its arguments (Linux /proc). glibc
 * parses GLIBC_TUNABLES in place, ending each tunable with a NUL, so the tunables are read
 * from the raw environment block: the variable's entry and the bare entries after it.
 */
function started(pid: number): { tunables: string[]; argv: string[] } {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  const at = entries.findIndex((e) => e.startsWith('GLIBC_TUNABLES='));
  const tunables: string[] = [];
  if (at >= 0) {
    tunables.push(entries[at]!.slice('GLIBC_TUNABLES='.length));
    for (let i = at + 1; i < entries.length && entries[i]!.startsWith('glibc.'); i++) tunables.push(entries[i]!);
  }
  return { tunables, argv: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0') };
}

test('`ferrite serve` runs with two glibc malloc arenas and its old generation started at 64 MiB, keeping tunables it was given', async (t) => {
  const dataDir = tempDir();
  try {
    const plain = await spawnNode(dataDir);
    const first = started(plain.child.pid!);
    t.deepEqual(first.tunables, ['glibc.malloc.arena_max=2']);
    t.true(first.argv.includes('--initial-old-space-size=64'), first.argv.join(' '));
    await stopChild(plain);
    // `env` runs the node in its own process (the same pid): a tunable of the operator's own is kept, and an arena count of theirs wins.
    const given = await spawnNode(dataDir, [], process.execPath, ['env', 'GLIBC_TUNABLES=glibc.malloc.tcache_count=0']);
    t.deepEqual(started(given.child.pid!).tunables, ['glibc.malloc.tcache_count=0', 'glibc.malloc.arena_max=2']);
    await stopChild(given);
    const own = await spawnNode(dataDir, [], process.execPath, ['env', 'GLIBC_TUNABLES=glibc.malloc.arena_max=4']);
    t.deepEqual(started(own.child.pid!).tunables, ['glibc.malloc.arena_max=4']);
    await stopChild(own);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
