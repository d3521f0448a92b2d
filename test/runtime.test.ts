// The runtime ferrite is built and tested on: Node 24 LTS, even on a machine whose system
// Node is older (README: the npm-packaged Node that `npm ci` installs).
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { getJson, killSpawnedNodes, spawnNode, tempDir } from './helpers/node.js';

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
