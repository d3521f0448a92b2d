#!/usr/bin/env node
// The `ferrite` command. The TypeScript sources compile to dist/ (npm ci runs the build).
// Started by a Node older than ferrite supports (a machine's system Node, run outside npm),
// it runs itself again on the npm-packaged Node that `npm ci` installed, when there is one.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MIN_MAJOR = 22;
const major = Number(process.versions.node.split('.')[0]);

// A serving node's main thread holds ≈ 25 MiB of live heap and allocates little. V8 then keeps
// its old-generation limit so close to the live size that, under steady ingest, it marks and
// compacts that heap several times a second (bench:scale, 300k series: 47–55 full GCs on the
// main thread, ≈ 35 % of a core at 1M series). Starting the old generation at 64 MiB takes that
// away (12–19 full GCs, load rate +8 %, same peak RSS). The flag can only be given at start, so
// `serve` replaces its own process with one that has it (same pid, stdio and signals).
const MAIN_OLD_SPACE = '--initial-old-space-size=64';
const serving = process.argv[2] === 'serve';
const startFlags = serving && !process.execArgv.some((a) => a.startsWith('--initial-old-space-size')) ? [MAIN_OLD_SPACE] : [];

// glibc gives threads that allocate their own malloc arenas (up to eight a core): RocksDB's
// background threads, libuv's pool and the worker threads each fill and free theirs, and memory
// freed in one arena is not reused by another thread's. Two arenas took a million-series load's
// peak RSS from 1 218–1 271 to 1 127–1 130 MiB, the load no slower (README, Performance,
// "Scale"). The C library reads GLIBC_TUNABLES only at start, so this too needs the restart
// below; an operator's own tunables are kept, and their own arena count wins. Other C
// libraries ignore the variable.
const MALLOC_ARENAS = 'glibc.malloc.arena_max=2';
function withMallocArenas(env) {
  const tunables = env.GLIBC_TUNABLES ?? '';
  if (tunables.includes('glibc.malloc.arena_max=')) return env;
  return { ...env, GLIBC_TUNABLES: tunables === '' ? MALLOC_ARENAS : `${tunables}:${MALLOC_ARENAS}` };
}
const env = serving ? withMallocArenas(process.env) : process.env;
const restart = startFlags.length > 0 || env !== process.env;

if (major < MIN_MAJOR) {
  const packaged = fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url));
  if (!existsSync(packaged)) {
    console.error(`ferrite needs Node.js ${MIN_MAJOR}.15 or newer (this is ${process.version}): run it through npm (npm start, npx ferrite) after npm ci, or install Node 24.`);
    process.exit(1);
  }
  const child = spawn(packaged, [...process.execArgv, ...startFlags, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit', env });
  // A stop asked of this process is the node's to handle (SIGTERM drains and seals).
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
} else if (restart && typeof process.execve === 'function' && process.platform !== 'win32') {
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...startFlags, fileURLToPath(import.meta.url), ...process.argv.slice(2)], env);
} else {
  const cli = new URL('../dist/bin/cli.js', import.meta.url);
  if (!existsSync(fileURLToPath(cli))) {
    console.error('ferrite is not built: run `npm ci` (or `npm run build`) first.');
    process.exit(1);
  }
  await import(cli.href);
}

