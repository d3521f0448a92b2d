// A data directory that cannot be opened ends `ferrite serve` with exit code 2 and one line
// naming the path and the cause, never an uncaught exception (issue 17 item 11).
//
// Covered everywhere: a file where the directory should be, a path through a file, and a
// directory locked by a node already running on it. Permissions (a read-only data directory,
// a parent the node may not create it in) need a user the kernel checks: as root, chmod
// stops nothing, so there the node runs as `nobody` (uid 65534), and these cases are skipped,
// with a log line, only when neither works. A read-only mount needs privileges tests lack.
import test, { type ExecutionContext } from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BIN, killSpawnedNodes, spawnNode, tempDir } from './helpers/node.js';

const made: string[] = [];

test.after.always(() => {
  killSpawnedNodes();
  // Give back write permission first, or a non-root user could not remove what it locked.
  for (const dir of made) {
    spawnSync('chmod', ['-R', 'u+rwx', dir]);
    rmSync(dir, { recursive: true, force: true });
  }
});

const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

interface Outcome {
  code: number | null;
  stderr: string;
  stdout: string;
}

/** Runs `ferrite serve` on `dataDir` (as `uid` when given) until it exits. */
function serve(dataDir: string, uid?: number): Promise<Outcome> {
  const ids = uid === undefined ? {} : { uid, gid: uid };
  const child = spawn(process.execPath, [BIN, 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'], ...ids });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    }),
  );
}

/** Exit code 2, nothing on stdout, and on stderr one line naming the path and the cause. */
function refused(t: ExecutionContext, outcome: Outcome, dataDir: string, cause: string): void {
  t.is(outcome.code, 2, outcome.stderr);
  t.is(outcome.stdout, '');
  const lines = outcome.stderr.trimEnd().split('\n');
  t.is(lines.length, 1, outcome.stderr);
  t.true(lines[0]!.startsWith(`cannot open data directory ${dataDir}: ${cause}`), lines[0]);
}

/** A temp dir whose contents another user may reach (mkdtemp makes it 0700). */
function sharedTempDir(): string {
  const dir = tempDir('ferrite-startup-');
  made.push(dir);
  chmodSync(dir, 0o755);
  return dir;
}

test('a file where the data directory should be', async (t) => {
  const file = path.join(sharedTempDir(), 'data');
  writeFileSync(file, 'not a directory');
  refused(t, await serve(file), file, 'it is a file, not a directory');
});

test('a data directory under a file', async (t) => {
  const file = path.join(sharedTempDir(), 'file');
  writeFileSync(file, '');
  const dataDir = path.join(file, 'data');
  refused(t, await serve(dataDir), dataDir, 'part of the path is a file, not a directory');
});

test('a data directory a running node holds', async (t) => {
  const dataDir = path.join(sharedTempDir(), 'data');
  const first = await spawnNode(dataDir);
  try {
    refused(t, await serve(dataDir), dataDir, 'it is locked by another process');
  } finally {
    first.child.kill('SIGTERM');
    await first.exited;
  }
});

/** The uid to run as for permission cases: ours, or `nobody` when we are root and it can run the node; null: neither. */
function unprivilegedUid(t: ExecutionContext): number | undefined | null {
  if (!asRoot) return undefined;
  const probe = spawnSync(process.execPath, [BIN, '--version'], { uid: NOBODY, gid: NOBODY, encoding: 'utf8' });
  if (probe.status === 0) return NOBODY;
  t.log(`running as root, and user nobody cannot run ${BIN} (${probe.stderr || probe.error?.message}): permission cases not covered`);
  return null;
}

test('a read-only data directory and one the user may not create', async (t) => {
  const uid = unprivilegedUid(t);
  if (uid === null) return t.pass();
  const root = sharedTempDir();
  // A data directory a node wrote before it was made read-only.
  const readOnly = path.join(root, 'read-only');
  const node = await spawnNode(readOnly);
  node.child.kill('SIGTERM');
  await node.exited;
  chmodSync(readOnly, 0o555);
  // A data directory to be created where the user may not write.
  const locked = path.join(root, 'locked');
  mkdirSync(locked, { mode: 0o555 });
  const missing = path.join(locked, 'data');
  for (const dataDir of [readOnly, missing]) {
    refused(t, await serve(dataDir, uid), dataDir, 'permission denied');
  }
});
