#!/usr/bin/env node
// What the test suite needs beyond Node and npm, made present before it runs (`npm test`
// calls this first; `.ci/run` calls it too). Plain JavaScript with no dependencies, so it
// runs on the system Node of a fresh machine before `npm ci` has installed anything.
//
// - the project's dependencies (`npm ci` when node_modules is missing), which bring the
//   Node 24 runtime the tests run on (the optional `node-linux-*` packages);
// - Debian packages: nats-server (cluster tests), chromium (console browser tests),
//   prometheus (real Prometheus and promtool tests), libatomic1 (rocksdb-native, the image test),
//   strace (the syncWrites test follows the node's system calls).
//
// As root, missing packages are installed with apt-get. Otherwise the script stops at once
// with one line naming the command to run: a test never finds its tool missing.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Each Debian package with the files whose presence says it is installed. */
const PACKAGES = [
  { name: 'nats-server', has: () => onPath('nats-server') },
  { name: 'chromium', has: () => existsSync(process.env.FERRITE_CHROMIUM ?? '/usr/bin/chromium') },
  { name: 'prometheus', has: () => onPath('prometheus') && onPath('promtool') },
  { name: 'libatomic1', has: () => dpkgInstalled('libatomic1') },
  { name: 'strace', has: () => onPath('strace') },
];

function onPath(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

function dpkgInstalled(name) {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.endsWith('installed');
}

function run(command, args) {
  console.log(`test set-up: ${command} ${args.join(' ')}`);
  execFileSync(command, args, { cwd: ROOT, stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

function fail(line) {
  console.error(line);
  process.exit(1);
}

if (!existsSync(join(ROOT, 'node_modules', '.package-lock.json'))) run('npm', ['ci', '--no-audit', '--no-fund']);

const missing = PACKAGES.filter((p) => !p.has()).map((p) => p.name);
if (missing.length > 0) {
  const command = `apt-get update && apt-get install -y ${missing.join(' ')}`;
  const isRoot = process.getuid?.() === 0;
  if (!isRoot || !onPath('apt-get')) fail(`ferrite's tests need ${missing.join(', ')}: run \`sudo sh -c '${command}'\` and then \`npm test\` again`);
  run('apt-get', ['update', '-qq']);
  run('apt-get', ['install', '-y', '-qq', ...missing]);
  const still = PACKAGES.filter((p) => !p.has()).map((p) => p.name);
  if (still.length > 0) fail(`test set-up: apt-get did not install ${still.join(', ')}; install them and run \`npm test\` again`);
}
